import { Context, Effect, Layer, Schema, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { Timestamp } from "../shared/columns.ts"
import { orDie } from "../shared/sql.ts"

/** Whose key it is: keys are private to one credential in one organization environment. */
export interface IdempotencyScope {
  readonly organizationId: string
  readonly environment: string
  readonly credentialId: string
  readonly key: string
}

/** A claimed key: the request it was claimed for, and the response once there is one. */
export const IdempotencyRecord = Schema.Struct({
  organization_id: Schema.String,
  environment: Schema.String,
  credential_id: Schema.String,
  key: Schema.String,
  fingerprint: Schema.String,
  status: Schema.NullOr(Schema.Int),
  body: Schema.NullOr(Schema.String),
  created_at: Schema.String
})
export type IdempotencyRecord = typeof IdempotencyRecord.Type

export const IdempotencyRow = IdempotencyRecord.mapFields(Struct.assign({ created_at: Timestamp }))

export type BeginOutcome =
  | { readonly _tag: "Started" }
  | { readonly _tag: "Replay"; readonly status: number; readonly body: string }
  | { readonly _tag: "InProgress" }
  | { readonly _tag: "Mismatch" }

/** A fresh claim of `scope`'s key for a request, with no response yet. */
export const claim = (scope: IdempotencyScope, fingerprint: string, at: string): IdempotencyRecord => ({
  organization_id: scope.organizationId,
  environment: scope.environment,
  credential_id: scope.credentialId,
  key: scope.key,
  fingerprint,
  status: null,
  body: null,
  created_at: at
})

/** What a later request with the same key gets, given the stored claim. */
export const outcomeOf = (existing: IdempotencyRecord, fingerprint: string): BeginOutcome =>
  existing.fingerprint !== fingerprint
    ? { _tag: "Mismatch" }
    : existing.status === null
    ? { _tag: "InProgress" }
    : { _tag: "Replay", status: existing.status, body: existing.body ?? "" }

/**
 * Storage port for idempotency keys. `begin` claims a key for a request
 * fingerprint: the first caller gets `Started`; later callers get the stored
 * response, `InProgress` while the first is still running, or `Mismatch` when
 * the key was used for a different request. Keys older than `staleBefore`
 * count as unused.
 */
export class IdempotencyRepo extends Context.Service<IdempotencyRepo, {
  readonly begin: (scope: IdempotencyScope, fingerprint: string, at: string, staleBefore: string) => Effect.Effect<BeginOutcome>
  readonly complete: (scope: IdempotencyScope, status: number, body: string) => Effect.Effect<void>
  readonly abandon: (scope: IdempotencyScope) => Effect.Effect<void>
}>()("@opsplatform/core/idempotency/IdempotencyRepo") {
  static readonly layerSql: Layer.Layer<IdempotencyRepo, never, SqlClient.SqlClient> = Layer.effect(
    IdempotencyRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // Keys are identified by their scope, not by an id of their own, so the rows go through
      // their row schema here rather than through `table`.
      const decode = Schema.decodeUnknownEffect(Schema.Array(IdempotencyRow))
      const encode = Schema.encodeEffect(IdempotencyRow)
      const scoped = (s: IdempotencyScope) =>
        sql`organization_id = ${s.organizationId} AND environment = ${s.environment}
          AND credential_id = ${s.credentialId} AND key = ${s.key}`
      return IdempotencyRepo.of({
        begin: (scope, fingerprint, at, staleBefore) =>
          orDie(Effect.gen(function*() {
            yield* sql`DELETE FROM idempotency_keys WHERE ${scoped(scope)} AND created_at < ${staleBefore}`
            const row = yield* Effect.orDie(encode(claim(scope, fingerprint, at)))
            const inserted = yield* sql`INSERT INTO idempotency_keys ${sql.insert(row)} ON CONFLICT DO NOTHING RETURNING key`
            if (inserted.length > 0) return { _tag: "Started" } as const
            const [existing] = yield* Effect.orDie(decode(yield* sql`SELECT * FROM idempotency_keys WHERE ${scoped(scope)}`))
            return existing === undefined ? { _tag: "InProgress" } as const : outcomeOf(existing, fingerprint)
          })),
        complete: (scope, status, body) =>
          orDie(sql`UPDATE idempotency_keys SET status = ${status}, body = ${body} WHERE ${scoped(scope)}`).pipe(
            Effect.asVoid
          ),
        abandon: (scope) => orDie(sql`DELETE FROM idempotency_keys WHERE ${scoped(scope)}`).pipe(Effect.asVoid)
      })
    })
  )
}
