import { Context, Effect, Layer, Semaphore } from "effect"
import type { Kdf, SecureRandom } from "effect/crypto"
import { HashingBusy } from "./errors.ts"
import { hashLowEntropy, verifyLowEntropy } from "./secrets.ts"

/**
 * How much password and PIN hashing a process does at once (decided:
 * docs/decisions.md, "Limits and ranges"): `concurrency` derivations run, up
 * to `queueLimit` more wait, and anything past that is refused at once. An
 * Argon2id derivation holds a core and 19 MiB for about 20–40 ms; unbounded,
 * a stream of sign-ins with new emails took every core from the requests of
 * everyone else.
 */
export interface HashingBudgetShape {
  readonly concurrency: number
  readonly queueLimit: number
}

export const defaultHashingBudget: HashingBudgetShape = { concurrency: 1, queueLimit: 16 }

export const HashingBudget = Context.Reference<HashingBudgetShape>("@opsplatform/core/shared/HashingBudget", {
  defaultValue: () => defaultHashingBudget
})

/**
 * Every low-entropy hash of the process (PINs, member passwords, the OAuth
 * sign-in's decoy) goes through this one pool: a semaphore of `concurrency`
 * permits with at most `queueLimit` waiters. A caller past the queue gets
 * `HashingBusy` without any hashing, so the cost an anonymous client can put
 * on the process is bounded whatever it sends.
 */
export class PasswordHashing extends Context.Service<PasswordHashing, {
  /** A PHC string of the secret (Argon2id, a fresh salt). */
  readonly hash: (secret: string) => Effect.Effect<string, HashingBusy>
  /** Whether the secret matches the stored hash (constant-time). */
  readonly verify: (secret: string, stored: string) => Effect.Effect<boolean, HashingBusy>
  /** Derivations running and waiting now. */
  readonly inFlight: Effect.Effect<number>
}>()("@opsplatform/core/shared/PasswordHashing") {
  static readonly layer: Layer.Layer<PasswordHashing, never, Kdf.Kdf | SecureRandom.SecureRandom> = Layer.effect(
    PasswordHashing,
    Effect.gen(function*() {
      const budget = yield* HashingBudget
      // The whole context, so the cost a host sets (`LowEntropyHashCost`) reaches the derivations.
      const context = yield* Effect.context<Kdf.Kdf | SecureRandom.SecureRandom>()
      const permits = Math.max(1, budget.concurrency)
      const semaphore = yield* Semaphore.make(permits)
      const admissible = permits + Math.max(0, budget.queueLimit)
      let admitted = 0
      const bounded = <A>(effect: Effect.Effect<A, never, Kdf.Kdf | SecureRandom.SecureRandom>) =>
        Effect.suspend(() => {
          // A full queue refuses at once: waiting longer would only make every caller late.
          if (admitted >= admissible) return Effect.fail(new HashingBusy({ retryAfterSec: 1 }))
          admitted++
          return semaphore.withPermits(1)(Effect.provideContext(effect, context)).pipe(
            Effect.ensuring(Effect.sync(() => {
              admitted--
            }))
          )
        })
      return PasswordHashing.of({
        hash: (secret) => bounded(hashLowEntropy(secret)),
        verify: (secret, stored) => bounded(verifyLowEntropy(secret, stored)),
        inFlight: Effect.sync(() => admitted)
      })
    })
  )
}
