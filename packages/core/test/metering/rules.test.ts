import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { SubscriptionStatus } from "../../src/metering/model.ts"
import {
  afterCall,
  type CallResult,
  expiredForProcessor,
  inUsageWindow,
  normalizedInstant,
  retryDelay,
  retryDiffers,
  subscriptionLifecycle,
  subscriptionStatuses,
  unixSeconds,
  USAGE_FUTURE_MS,
  USAGE_PAST_MS,
  usageWindowIssue
} from "../../src/metering/rules.ts"

const random = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true })
const NOW = Date.UTC(2026, 10, 23, 12)
const policy = { baseMs: 1_000, maxMs: 600_000 }

describe("a subscription's lifecycle", () => {
  it("pauses and resumes, cancels from either, and never leaves cancelled", () => {
    const moves: Record<SubscriptionStatus, Array<SubscriptionStatus>> = {
      active: ["paused", "cancelled"],
      paused: ["active", "cancelled"],
      cancelled: []
    }
    for (const from of subscriptionStatuses) {
      for (const to of subscriptionStatuses) {
        expect(subscriptionLifecycle.can(from, to), `${from} → ${to}`).toBe(moves[from].includes(to))
      }
    }
  })
})

describe("the usage window", () => {
  it("is Stripe's: 35 days back and 5 minutes ahead, both ends included", () => {
    expect([USAGE_PAST_MS, USAGE_FUTURE_MS]).toEqual([35 * 86_400_000, 300_000])
    expect(inUsageWindow(NOW - USAGE_PAST_MS, NOW)).toBe(true)
    expect(inUsageWindow(NOW - USAGE_PAST_MS - 1, NOW)).toBe(false)
    expect(inUsageWindow(NOW + USAGE_FUTURE_MS, NOW)).toBe(true)
    expect(inUsageWindow(NOW + USAGE_FUTURE_MS + 1, NOW)).toBe(false)
    expect(usageWindowIssue(NOW)).toBe(
      "must be within the last 35 days and at most 5 minutes ahead: between 2026-10-19T12:00:00.000Z and 2026-11-23T12:05:00.000Z"
    )
  })

  it("a record sent later than 35 days after its timestamp is too old for the processor", () => {
    const at = new Date(NOW).toISOString()
    expect(expiredForProcessor(at, NOW + USAGE_PAST_MS)).toBe(false)
    expect(expiredForProcessor(at, NOW + USAGE_PAST_MS + 1)).toBe(true)
  })

  it("stores instants in UTC at millisecond precision, sends them in whole seconds", () => {
    expect(normalizedInstant("2026-11-23T14:00:00.123456+02:00")).toBe("2026-11-23T12:00:00.123Z")
    expect(unixSeconds("2026-11-23T12:00:00.999Z")).toBe(NOW / 1000)
  })
})

describe("a retry under a recorded identifier", () => {
  const stored = { quantity: 5, timestamp: "2026-11-23T12:00:00.000Z" }
  it("differs by its quantity, or by a timestamp naming another instant", () => {
    expect(retryDiffers(stored, { quantity: 5 })).toBe(false)
    expect(retryDiffers(stored, { quantity: 5, timestamp: "2026-11-23T14:00:00+02:00" })).toBe(false)
    expect(retryDiffers(stored, { quantity: 6 })).toBe(true)
    expect(retryDiffers(stored, { quantity: 5, timestamp: "2026-11-23T12:00:01Z" })).toBe(true)
  })
})

describe("the retry delay", () => {
  it("doubles from the base up to the cap, with equal jitter: between half and all of it", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 10_000 }), random, (failures, r) => {
      const full = Math.min(policy.maxMs, policy.baseMs * 2 ** (failures - 1))
      const delay = retryDelay(policy, failures, r)
      expect(delay).toBeGreaterThanOrEqual(Math.floor(full / 2))
      expect(delay).toBeLessThanOrEqual(full)
    }))
    expect([1, 2, 3, 4].map((n) => retryDelay(policy, n, 0.999999))).toEqual([1000, 2000, 4000, 8000])
    expect(retryDelay(policy, 1, 0)).toBe(500)
    expect(retryDelay(policy, 30, 0.999999)).toBe(600_000)
  })

  it("never waits less than a Retry-After, nor more than the cap", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 50 }), random, fc.integer({ min: 0, max: 10 ** 9 }), (failures, r, after) => {
      const delay = retryDelay(policy, failures, r, after)
      expect(delay).toBeGreaterThanOrEqual(Math.min(after, policy.maxMs))
      expect(delay).toBeLessThanOrEqual(policy.maxMs)
    }))
  })
})

describe("after a call", () => {
  const at = (result: CallResult, failuresBefore = 0) => afterCall({ result, failuresBefore, nowMs: NOW, random: 0.5, policy })
  it("an accepted event and an identifier the processor already holds are both delivered", () => {
    expect(at({ _tag: "Accepted" })).toEqual({
      status: "delivered",
      nextAttemptAt: null,
      lastError: null,
      forwardedAt: new Date(NOW).toISOString(),
      backoffMs: null
    })
    const dup = at({ _tag: "AlreadyRecorded", message: "An event already exists with identifier u-1." })
    expect([dup.status, dup.lastError]).toEqual(["delivered", "An event already exists with identifier u-1."])
  })

  it("a refusal fails the record for good, with the processor's message", () => {
    expect(at({ _tag: "Refused", status: 400, message: "No such customer" })).toEqual({
      status: "failed",
      nextAttemptAt: null,
      lastError: "No such customer",
      forwardedAt: null,
      backoffMs: null
    })
  })

  it("an unavailable processor means retrying later, and the stream waits as long", () => {
    const first = at({ _tag: "Unavailable", status: 503, message: "down" })
    expect(first).toEqual({
      status: "retrying",
      nextAttemptAt: new Date(NOW + 750).toISOString(),
      lastError: "down",
      forwardedAt: null,
      backoffMs: 750
    })
    expect(at({ _tag: "Unavailable", status: 429, message: "slow down" }, 3).backoffMs).toBe(6_000)
    expect(at({ _tag: "Unavailable", status: 429, message: "slow down", retryAfterMs: 20_000 }).backoffMs).toBe(20_000)
  })
})
