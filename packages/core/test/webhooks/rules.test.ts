import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { DeliveryStatus } from "../../src/webhooks/model.ts"
import {
  afterAttempt,
  attemptBudget,
  canMove,
  defaultSchedule,
  judge,
  nextDelay,
  parseRetryAfter,
  redeliverDecision,
  withJitter
} from "../../src/webhooks/rules.ts"

const random = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true })

describe("the retry schedule", () => {
  it("is the design's: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h — 8 attempts in all", () => {
    expect(defaultSchedule).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000])
    expect(attemptBudget(defaultSchedule)).toBe(8)
  })

  it("moves each delay by at most ±20 %, covering the whole band", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 10 ** 9 }), random, (delay, r) => {
      const jittered = withJitter(delay, r)
      expect(jittered).toBeGreaterThanOrEqual(Math.floor(delay * 0.8))
      expect(jittered).toBeLessThanOrEqual(Math.ceil(delay * 1.2))
    }))
    expect(withJitter(1000, 0)).toBe(800)
    expect(withJitter(1000, 0.5)).toBe(1000)
    expect(withJitter(1000, 0.999999)).toBe(1200)
  })

  it("waits after attempt n the n-th delay, jittered, and ends after the 8th", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 7 }), random, (attempt, r) => {
      expect(nextDelay({ attempt, schedule: defaultSchedule, random: r })).toBe(withJitter(defaultSchedule[attempt - 1]!, r))
    }))
    expect(nextDelay({ attempt: 8, schedule: defaultSchedule, random: 0.5 })).toBeUndefined()
  })

  it("honours Retry-After on 429 and 503 within [delay, 2×delay], and ignores it otherwise", () => {
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 7 }),
      random,
      fc.integer({ min: 0, max: 10 ** 9 }),
      fc.constantFrom(429, 503),
      (attempt, r, retryAfterMs, status) => {
        const delay = withJitter(defaultSchedule[attempt - 1]!, r)
        const got = nextDelay({ attempt, schedule: defaultSchedule, random: r, status, retryAfterMs })!
        expect(got).toBeGreaterThanOrEqual(delay)
        expect(got).toBeLessThanOrEqual(2 * delay)
        if (retryAfterMs >= delay && retryAfterMs <= 2 * delay) expect(got).toBe(retryAfterMs)
      }
    ))
    expect(nextDelay({ attempt: 1, schedule: [1000], random: 0.5, status: 500, retryAfterMs: 1_500 })).toBe(1000)
    expect(nextDelay({ attempt: 1, schedule: [1000], random: 0.5, status: 503, retryAfterMs: 1_500 })).toBe(1_500)
    expect(nextDelay({ attempt: 1, schedule: [1000], random: 0.5, status: 429, retryAfterMs: 60_000 })).toBe(2_000)
    expect(nextDelay({ attempt: 1, schedule: [1000], random: 0.5, status: 429, retryAfterMs: 10 })).toBe(1000)
  })

  it("reads Retry-After as seconds or as an HTTP date", () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0)
    expect(parseRetryAfter("120", now)).toBe(120_000)
    expect(parseRetryAfter(" 0 ", now)).toBe(0)
    expect(parseRetryAfter("Thu, 01 Jan 2026 12:00:30 GMT", now)).toBe(30_000)
    expect(parseRetryAfter("Thu, 01 Jan 2026 11:00:00 GMT", now)).toBe(0)
    expect(parseRetryAfter(undefined, now)).toBeUndefined()
    expect(parseRetryAfter("-5", now)).toBeUndefined()
    expect(parseRetryAfter("1.5", now)).toBeUndefined()
    expect(parseRetryAfter("soon", now)).toBeUndefined()
  })
})

describe("judging an attempt", () => {
  it("2xx succeeds, 410 is gone, everything else is retried (redirects included)", () => {
    for (const status of [200, 201, 202, 204, 299]) expect(judge({ _tag: "Answered", status })).toBe("succeeded")
    expect(judge({ _tag: "Answered", status: 410 })).toBe("gone")
    for (const status of [100, 301, 302, 307, 400, 401, 404, 409, 429, 500, 502, 503, 504]) {
      expect(judge({ _tag: "Answered", status })).toBe("retry")
    }
    expect(judge({ _tag: "NotAnswered", error: "Connection refused" })).toBe("retry")
  })

  it("after a failure the delivery is failed with a delay until the budget is spent, then dead", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 8 }), random, fc.integer({ min: 300, max: 599 }), (used, r, status) => {
      fc.pre(status !== 410)
      const next = afterAttempt({ result: { _tag: "Answered", status }, attemptsUsed: used, schedule: defaultSchedule, random: r })
      if (used < 8) {
        expect(next.status).toBe("failed")
        expect(next.delayMs).toBeGreaterThan(0)
      } else {
        expect(next).toEqual({ status: "dead", delayMs: undefined })
      }
    }))
    expect(afterAttempt({ result: { _tag: "Answered", status: 410 }, attemptsUsed: 1, schedule: defaultSchedule, random: 0 }))
      .toEqual({ status: "dead", delayMs: undefined })
    expect(afterAttempt({ result: { _tag: "Answered", status: 204 }, attemptsUsed: 8, schedule: defaultSchedule, random: 0 }))
      .toEqual({ status: "succeeded", delayMs: undefined })
  })
})

describe("delivery states", () => {
  const all: ReadonlyArray<DeliveryStatus> = ["pending", "sending", "succeeded", "failed", "dead"]

  it("move only along the table", () => {
    const allowed = new Set([
      "pending>sending",
      "sending>sending",
      "sending>succeeded",
      "sending>failed",
      "sending>dead",
      "failed>sending",
      "failed>pending",
      "dead>pending",
      "succeeded>pending"
    ])
    for (const from of all) for (const to of all) expect(canMove(from, to)).toBe(allowed.has(`${from}>${to}`))
  })

  it("redeliver resets failed, dead and pending; succeeded only with force; never while sending", () => {
    for (const status of ["failed", "dead", "pending"] as const) {
      expect(redeliverDecision(status, false)._tag).toBe("Reset")
      expect(redeliverDecision(status, true)._tag).toBe("Reset")
    }
    expect(redeliverDecision("succeeded", true)._tag).toBe("Reset")
    expect(redeliverDecision("succeeded", false)).toMatchObject({ _tag: "Refuse", reason: expect.stringContaining("force") })
    expect(redeliverDecision("sending", true)._tag).toBe("Refuse")
  })
})
