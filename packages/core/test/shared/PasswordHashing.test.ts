import { Deferred, Effect, Fiber, Layer } from "effect"
import { Kdf, SecureRandom } from "effect/crypto"
import { describe, expect, it } from "vitest"
import { HashingBudget, PasswordHashing } from "../../src/shared/PasswordHashing.ts"

/**
 * A Kdf whose derivations wait until the test lets them go, counting how many
 * run at once: the pool's bound is seen without timing anything.
 */
const gatedKdf = Effect.gen(function*() {
  const gate = yield* Deferred.make<void>()
  const state = { running: 0, most: 0, started: 0 }
  const kdf = Kdf.Kdf.of({
    derive: (_algorithm, _secret, options) =>
      Effect.gen(function*() {
        state.running++
        state.started++
        state.most = Math.max(state.most, state.running)
        yield* Deferred.await(gate)
        state.running--
        return new Uint8Array(options.length)
      })
  })
  return { gate, state, kdf }
})

const pool = (budget: { readonly concurrency: number; readonly queueLimit: number }, kdf: Kdf.Kdf["Service"]) =>
  PasswordHashing.layer.pipe(
    Layer.provide(Layer.succeed(Kdf.Kdf, kdf)),
    Layer.provide(SecureRandom.layerWebCrypto),
    Layer.provide(Layer.succeed(HashingBudget, budget))
  )

describe("PasswordHashing", () => {
  it("runs at most `concurrency` derivations, queues `queueLimit` more and refuses the rest at once with HashingBusy", async () => {
    const { gate, kdf, state } = await Effect.runPromise(gatedKdf)
    await Effect.runPromise(Effect.gen(function*() {
      const hashing = yield* PasswordHashing
      const fibers = yield* Effect.forEach(
        Array.from({ length: 8 }, (_, i) => i),
        (i) =>
          Effect.forkChild(Effect.result(
            i % 2 === 0 ? hashing.hash(`pin-${i}`) : hashing.verify(`pin-${i}`, "$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ=$aGFzaA==")
          ))
      )
      // Until the two that run have started (a salt comes from Web Crypto, asynchronously).
      while (state.started < 2) yield* Effect.sleep("1 millis")
      // Two run, three wait, three were refused without a derivation.
      expect(state.started).toBe(2)
      expect(yield* hashing.inFlight).toBe(5)
      yield* Deferred.succeed(gate, undefined)
      const results = yield* Effect.forEach(fibers, Fiber.join)
      const refused = results.filter((r) => r._tag === "Failure")
      expect(refused.length).toBe(3)
      expect(refused.every((r) => r._tag === "Failure" && r.failure._tag === "HashingBusy" && r.failure.retryAfterSec === 1)).toBe(true)
      expect(state.most).toBe(2)
      expect(state.started).toBe(5)
      expect(yield* hashing.inFlight).toBe(0)
      // Room again once the queue drained.
      expect((yield* Effect.result(hashing.hash("again")))._tag).toBe("Success")
    }).pipe(Effect.provide(pool({ concurrency: 2, queueLimit: 3 }, kdf))))
  })
})
