import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import type { CoreLayers } from "@opsplatform/core"
import { IdempotencyRepo } from "@opsplatform/core/idempotency/IdempotencyRepo"
import { Ids } from "@opsplatform/core/shared/Ids"
import { freshOrganization, timestamps } from "./support.ts"

/** The IdempotencyRepo contract. */
export const idempotencyRepoConformance = (name: string, storage: Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>) =>
  describe(`IdempotencyRepo conformance: ${name}`, () => {
    layer(storage, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("claims a key once, then replays, refuses a different request, and frees an abandoned key", () =>
        Effect.gen(function*() {
          const repo = yield* IdempotencyRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const [t0, t1] = timestamps(2)
          const stale = "2000-01-01T00:00:00.000Z"
          const scope = { organizationId: org.id, environment: "live", credentialId: yield* ids.uuid, key: "k-1" }
          assert.deepStrictEqual(yield* repo.begin(scope, "fp-a", t0!, stale), { _tag: "Started" })
          assert.deepStrictEqual(yield* repo.begin(scope, "fp-a", t1!, stale), { _tag: "InProgress" })
          yield* repo.complete(scope, 201, "{\"data\":1}")
          assert.deepStrictEqual(yield* repo.begin(scope, "fp-a", t1!, stale), { _tag: "Replay", status: 201, body: "{\"data\":1}" })
          assert.deepStrictEqual(yield* repo.begin(scope, "fp-b", t1!, stale), { _tag: "Mismatch" })
          // Keys are private to their credential and environment.
          assert.deepStrictEqual(yield* repo.begin({ ...scope, credentialId: yield* ids.uuid }, "fp-b", t1!, stale), { _tag: "Started" })
          assert.deepStrictEqual(yield* repo.begin({ ...scope, environment: "sandbox" }, "fp-b", t1!, stale), { _tag: "Started" })
          const other = { ...scope, key: "k-2" }
          assert.deepStrictEqual(yield* repo.begin(other, "fp-c", t0!, stale), { _tag: "Started" })
          yield* repo.abandon(other)
          assert.deepStrictEqual(yield* repo.begin(other, "fp-d", t1!, stale), { _tag: "Started" })
          // A key older than the staleness bound counts as unused.
          assert.deepStrictEqual(yield* repo.begin(scope, "fp-z", t1!, t1!), { _tag: "Started" })
        }))
    })
  })
