import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { slidingLog, withoutNewest } from "../../src/ratelimit/RateLimiter.ts"

/** Replays request times through the log; which were admitted. */
const replay = (times: ReadonlyArray<number>, policy: { name: string; limit: number; windowSeconds: number }) => {
  let hits: ReadonlyArray<number> = []
  return times.map((t) => {
    const { decision, hits: next } = slidingLog(hits, t, policy)
    hits = next
    return decision
  })
}

describe("the sliding log", () => {
  const arbitrary = fc.record({
    limit: fc.integer({ min: 1, max: 6 }),
    windowSeconds: fc.integer({ min: 1, max: 5 }),
    gaps: fc.array(fc.integer({ min: 0, max: 3_000 }), { minLength: 1, maxLength: 60 })
  })

  it("never admits more than the limit in any window-long span, and refuses only when the window is full", () => {
    fc.assert(fc.property(arbitrary, ({ gaps, limit, windowSeconds }) => {
      const policy = { name: "p", limit, windowSeconds }
      const windowMs = windowSeconds * 1000
      const times = gaps.reduce<Array<number>>((acc, g) => [...acc, (acc.at(-1) ?? 1_000_000) + g], [])
      const decisions = replay(times, policy)
      const admitted = times.filter((_, i) => decisions[i]!.allowed)
      // Every span [t, t + window) starting at an admitted request holds at most `limit` of them.
      for (const t of admitted) expect(admitted.filter((u) => u >= t && u < t + windowMs).length).toBeLessThanOrEqual(limit)
      times.forEach((t, i) => {
        // The requests admitted before this one that are still in its window.
        const earlier = times.filter((u, j) => j < i && decisions[j]!.allowed && u > t - windowMs).sort((a, b) => a - b)
        if (decisions[i]!.allowed) {
          expect(decisions[i]!.remaining).toBe(limit - earlier.length - 1)
        } else {
          // A refusal: the window was full, and the wait it gives is exactly when a place frees.
          expect(earlier.length).toBeGreaterThanOrEqual(limit)
          const frees = earlier.at(-limit)! + windowMs
          expect(decisions[i]!.resetSeconds).toBe(Math.max(1, Math.ceil((frees - t) / 1000)))
        }
      })
    }), { numRuns: 300 })
  })

  it("a fixed window's edge admits nothing more: limit just before a minute turns, none just after", () => {
    const policy = { name: "heavy", limit: 30, windowSeconds: 60 }
    const before = Array.from({ length: 30 }, (_, i) => 59_000 + i)
    const after = Array.from({ length: 30 }, (_, i) => 61_000 + i)
    expect(replay([...before, ...after], policy).filter((d) => d.allowed).length).toBe(30)
  })

  it("a refund takes back the newest entry still in the window", () => {
    const policy = { name: "p", limit: 3, windowSeconds: 10 }
    expect(withoutNewest([1_000, 5_000, 9_000], 12_000, policy)).toEqual([5_000])
    expect(withoutNewest([1_000], 20_000, policy)).toEqual([])
  })
})
