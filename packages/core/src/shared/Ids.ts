import { Context, Effect, Layer } from "effect"
import { SecureRandom } from "effect/crypto"

/**
 * The only source of identifiers in core. Production ids are UUID v7 (time
 * ordered, so primary-key indexes stay compact); tests swap in a sequence.
 */
export class Ids extends Context.Service<Ids, {
  readonly uuid: Effect.Effect<string>
}>()("@opsplatform/core/shared/Ids") {
  static readonly layer: Layer.Layer<Ids, never, SecureRandom.SecureRandom> = Layer.effect(
    Ids,
    Effect.gen(function*() {
      const random = yield* SecureRandom.SecureRandom
      return Ids.of({ uuid: random.uuidV7() })
    })
  )

  /** Deterministic ids `00000000-0000-4000-8000-<n>` for tests and examples. */
  static readonly layerSequential = (start = 1): Layer.Layer<Ids> =>
    Layer.sync(Ids, () => {
      let next = start
      return Ids.of({
        uuid: Effect.sync(() => `00000000-0000-4000-8000-${(next++).toString(16).padStart(12, "0")}`)
      })
    })
}

/**
 * A fresh id for a resource whose id schema brands a UUID (`LocationId`, …).
 * The `Ids` service only makes UUIDs, so the brand holds by construction.
 */
export const newId = <Id extends string>(ids: Ids["Service"], _schema: { readonly Type: Id }): Effect.Effect<Id> =>
  ids.uuid as Effect.Effect<Id>
