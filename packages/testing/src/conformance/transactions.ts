import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import type { CoreLayers } from "@opsplatform/core"
import { Outbox } from "@opsplatform/core/events/Outbox"
import { LocationId } from "@opsplatform/core/locations/model"
import { LocationRepo } from "@opsplatform/core/locations/LocationRepo"
import { Ids } from "@opsplatform/core/shared/Ids"
import { Transactor } from "@opsplatform/core/shared/Transactor"
import { freshOrganization, timestamps } from "./support.ts"

/**
 * The Transactor contract: a unit of work commits or rolls back as a whole,
 * outbox events included, and after-commit actions run only on commit.
 */
export const transactorConformance = (
  name: string,
  storage: Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>,
  /** Counts the outbox rows of a tenant with the given event id, straight from the store. */
  countEvents: (organizationId: string, eventId: string) => Effect.Effect<number, unknown, CoreLayers.StoragePorts | Ids>
) =>
  describe(`Transactor and Outbox conformance: ${name}`, () => {
    layer(storage, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("rolls back every write of a failed unit of work, outbox event included", () =>
        Effect.gen(function*() {
          const tx = yield* Transactor
          const repo = yield* LocationRepo
          const outbox = yield* Outbox
          const ids = yield* Ids
          const org = yield* freshOrganization
          const [t0] = timestamps(1)
          const id = yield* ids.uuid
          const eventId = `evt_${id.replace(/-/g, "")}`
          let afterCommitRan = false
          const failed = yield* tx.withTransaction(Effect.gen(function*() {
            yield* repo.insert(org.live, {
              id: LocationId.make(id),
              name: "Doomed",
              code: null,
              vertical_type: "other",
              is_primary: false,
              address: null,
              latitude: null,
              longitude: null,
              created_at: t0!,
              updated_at: t0!
            })
            yield* outbox.publish(org.live, { eventId, type: "test.event", data: { id } })
            yield* tx.afterCommit(Effect.sync(() => {
              afterCommitRan = true
            }))
            return yield* Effect.fail("boom" as const)
          })).pipe(Effect.flip)
          assert.strictEqual(failed, "boom")
          assert.isTrue(Option.isNone(yield* repo.find(org.live, id)))
          assert.strictEqual(yield* countEvents(org.id, eventId), 0)
          assert.isFalse(afterCommitRan)
        }))

      it.effect("commits every write together and runs after-commit actions once", () =>
        Effect.gen(function*() {
          const tx = yield* Transactor
          const outbox = yield* Outbox
          const ids = yield* Ids
          const org = yield* freshOrganization
          const eventId = `evt_${(yield* ids.uuid).replace(/-/g, "")}`
          let runs = 0
          yield* tx.withTransaction(Effect.gen(function*() {
            yield* outbox.publish(org.live, { eventId, type: "test.event", data: { n: 1 } })
            // The same fact published twice is one event.
            yield* outbox.publish(org.live, { eventId, type: "test.event", data: { n: 1 } })
            yield* tx.afterCommit(Effect.sync(() => {
              runs++
            }))
          }))
          assert.strictEqual(yield* countEvents(org.id, eventId), 1)
          assert.strictEqual(runs, 1)
        }))
    })
  })
