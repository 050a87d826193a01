import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { orDie } from "../shared/sql.ts"

/** Whose key it is: keys are private to one credential in one organization environment. */
export interface IdempotencyScope {
  readonly organizationId: string
  readonly environment: string
  readonly credentialId: string
  readonly key: string
}

export type BeginOutcome =
  | { readonly _tag: "Started" }
  | { readonly _tag: "Replay"; readonly status: number; readonly body: string }
  | { readonly _tag: "InProgress" }
  | { readonly _tag: "Mismatch" }

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
      const scoped = (s: IdempotencyScope) =>
        sql`organization_id = ${s.organizationId} AND environment = ${s.environment}
          AND credential_id = ${s.credentialId} AND key = ${s.key}`
      return IdempotencyRepo.of({
        begin: (scope, fingerprint, at, staleBefore) =>
          orDie(Effect.gen(function*() {
            yield* sql`DELETE FROM idempotency_keys WHERE ${scoped(scope)} AND created_at < ${staleBefore}`
            const inserted = yield* sql`INSERT INTO idempotency_keys
                (organization_id, environment, credential_id, key, fingerprint, created_at)
              VALUES (${scope.organizationId}, ${scope.environment}, ${scope.credentialId}, ${scope.key}, ${fingerprint}, ${at})
              ON CONFLICT DO NOTHING RETURNING key`
            if (inserted.length > 0) return { _tag: "Started" } as const
            const rows = yield* sql`SELECT fingerprint, status, body FROM idempotency_keys WHERE ${scoped(scope)}`
            const row = rows[0] as { fingerprint: string; status: number | null; body: string | null } | undefined
            if (row === undefined) return { _tag: "InProgress" } as const
            if (row.fingerprint !== fingerprint) return { _tag: "Mismatch" } as const
            if (row.status === null) return { _tag: "InProgress" } as const
            return { _tag: "Replay", status: Number(row.status), body: row.body ?? "" } as const
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
