import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { TestClock } from "effect/testing"
import type { CoreLayers } from "@opsplatform/core"
import { RateLimiter } from "@opsplatform/core/ratelimit/RateLimiter"
import { Ids } from "@opsplatform/core/shared/Ids"

type Storage = Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>

/**
 * The RateLimiter contract: an exact sliding window — no span of the window's
 * length admits more than the limit, across any clock boundary — refused
 * requests do not count, refunds give back the newest admitted request, and
 * concurrent callers never exceed the limit.
 */
export const rateLimiterConformance = (name: string, storage: Storage) =>
  describe(`RateLimiter conformance: ${name}`, () => {
    layer(storage, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("admits the limit in any window-long span, and the next request when the oldest leaves it", () =>
        Effect.gen(function*() {
          const limiter = yield* RateLimiter
          const key = `conformance:${yield* (yield* Ids).uuid}`
          const policy = { name: "test", limit: 3, windowSeconds: 60 }
          // 12:00:30 — half way through a clock minute.
          yield* TestClock.setTime(Date.UTC(2026, 2, 2, 12, 0, 30))
          const first = yield* Effect.forEach([1, 2, 3], () => limiter.consume(key, policy))
          assert.deepStrictEqual(first.map((d) => [d.allowed, d.remaining, d.resetSeconds]), [[true, 2, 60], [true, 1, 60], [true, 0, 60]])
          assert.deepStrictEqual(yield* limiter.consume(key, policy), { allowed: false, limit: 3, remaining: 0, resetSeconds: 60 })
          yield* TestClock.adjust("29 seconds")
          assert.deepStrictEqual(yield* limiter.consume(key, policy), { allowed: false, limit: 3, remaining: 0, resetSeconds: 31 })
          // 12:01:00 — a new clock minute, but the three are still inside the last 60 seconds.
          yield* TestClock.adjust("1 second")
          assert.deepStrictEqual(yield* limiter.consume(key, policy), { allowed: false, limit: 3, remaining: 0, resetSeconds: 30 })
          // 12:01:30 — they have left the window; the refusals never counted.
          yield* TestClock.adjust("30 seconds")
          assert.deepStrictEqual(yield* limiter.consume(key, policy), { allowed: true, limit: 3, remaining: 2, resetSeconds: 60 })
          // Other keys have their own log.
          assert.isTrue((yield* limiter.consume(`${key}:other`, policy)).allowed)
          // Long after, the key starts afresh, whatever happened before.
          yield* limiter.consume(key, policy)
          yield* limiter.consume(key, policy)
          assert.isFalse((yield* limiter.consume(key, policy)).allowed)
          yield* TestClock.adjust("125 seconds")
          assert.deepStrictEqual((yield* limiter.consume(key, policy)).remaining, 2)
        }).pipe(Effect.provide(TestClock.layer())))

      it.effect("closes the clock-boundary edge: a burst before a minute turns and one after it share the limit", () =>
        Effect.gen(function*() {
          const limiter = yield* RateLimiter
          const key = `conformance:${yield* (yield* Ids).uuid}`
          const policy = { name: "test", limit: 3, windowSeconds: 60 }
          yield* TestClock.setTime(Date.UTC(2026, 2, 2, 12, 0, 59))
          const before = yield* Effect.forEach([1, 2, 3], () => limiter.consume(key, policy))
          yield* TestClock.adjust("1500 millis")
          const after = yield* Effect.forEach([1, 2, 3], () => limiter.consume(key, policy))
          assert.deepStrictEqual([...before, ...after].map((d) => d.allowed), [true, true, true, false, false, false])
          // 12:01:00.5: the burst of 12:00:59 leaves the window at 12:01:59.
          assert.strictEqual(after[0]!.resetSeconds, 59)
          // Spread out, each request frees its own place exactly a window later.
          const spread = `${key}:spread`
          const at = (ms: number) => TestClock.setTime(Date.UTC(2026, 2, 2, 13, 0, 0) + ms)
          for (const ms of [0, 20_000, 40_000]) {
            yield* at(ms)
            assert.isTrue((yield* limiter.consume(spread, policy)).allowed)
          }
          yield* at(59_999)
          assert.deepStrictEqual(yield* limiter.consume(spread, policy), { allowed: false, limit: 3, remaining: 0, resetSeconds: 1 })
          yield* at(60_000)
          assert.deepStrictEqual(yield* limiter.consume(spread, policy), { allowed: true, limit: 3, remaining: 0, resetSeconds: 20 })
          yield* at(79_999)
          assert.isFalse((yield* limiter.consume(spread, policy)).allowed)
        }).pipe(Effect.provide(TestClock.layer())))

      it.effect("a refund gives back the newest request still in the window, and none that left it", () =>
        Effect.gen(function*() {
          const limiter = yield* RateLimiter
          const key = `conformance:${yield* (yield* Ids).uuid}`
          const policy = { name: "test", limit: 2, windowSeconds: 60 }
          yield* TestClock.setTime(Date.UTC(2026, 2, 2, 12, 0, 0))
          yield* limiter.consume(key, policy)
          yield* TestClock.adjust("30 seconds")
          yield* limiter.consume(key, policy)
          assert.isFalse((yield* limiter.consume(key, policy)).allowed)
          yield* TestClock.adjust("10 seconds")
          yield* limiter.refund(key, policy)
          // 12:00:45: the 12:00:30 request was given back; the 12:00:00 one still counts until 12:01:00.
          yield* TestClock.adjust("5 seconds")
          assert.deepStrictEqual(yield* limiter.consume(key, policy), { allowed: true, limit: 2, remaining: 0, resetSeconds: 15 })
          // Refunds never go below zero: two refunds of an unused key leave it at the full limit.
          const fresh = `${key}:fresh`
          yield* limiter.refund(fresh, policy)
          yield* limiter.consume(fresh, policy)
          yield* limiter.refund(fresh, policy)
          yield* limiter.refund(fresh, policy)
          assert.strictEqual((yield* limiter.consume(fresh, policy)).remaining, 1)
          // A refund after the window slid past the requests lifts nothing of the next ones.
          yield* limiter.consume(fresh, policy)
          yield* TestClock.adjust("60 seconds")
          yield* limiter.consume(fresh, policy)
          yield* TestClock.adjust("60 seconds")
          yield* limiter.refund(fresh, policy)
          assert.strictEqual((yield* limiter.consume(fresh, policy)).remaining, 1)
        }).pipe(Effect.provide(TestClock.layer())))

      it.effect("never admits more than the limit to concurrent callers", () =>
        Effect.gen(function*() {
          const limiter = yield* RateLimiter
          const key = `conformance:${yield* (yield* Ids).uuid}`
          const policy = { name: "test", limit: 7, windowSeconds: 3600 }
          const decisions = yield* Effect.forEach(Array.from({ length: 20 }), () => limiter.consume(key, policy), {
            concurrency: 8
          })
          assert.strictEqual(decisions.filter((d) => d.allowed).length, 7)
          assert.deepStrictEqual(
            decisions.filter((d) => d.allowed).map((d) => d.remaining).sort((a, b) => a - b),
            [0, 1, 2, 3, 4, 5, 6]
          )
        }))
    })
  })
