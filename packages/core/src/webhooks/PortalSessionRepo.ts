import { Context, Effect, Layer, type Option, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { Json, NullableTimestamp, Timestamp } from "../shared/columns.ts"
import { orDie } from "../shared/sql.ts"
import { table } from "../shared/tables.ts"
import type { Tenant, TenantScoped } from "../shared/tenant.ts"
import { type PortalSessionId, StoredPortalSession } from "./model.ts"

export const PortalSessionRow = StoredPortalSession.mapFields(Struct.assign({
  event_types: Json(StoredPortalSession.fields.event_types),
  frame_ancestors: Json(StoredPortalSession.fields.frame_ancestors),
  theme: Json(StoredPortalSession.fields.theme),
  created_at: Timestamp,
  expires_at: Timestamp,
  exchanged_at: NullableTimestamp,
  revoked_at: NullableTimestamp
}))

/** A browser holding a link or a cookie is known only by its hash, before anyone knows whose session it is. */
type PortalCrossTenant = "claimLink" | "findByLinkHash" | "findByCookieHash" | "purgeExpired"

/**
 * Storage port for webhook portal sessions. A session row carries its
 * tenant; the lookups by hash are how a browser's link or cookie finds it.
 */
export class PortalSessionRepo extends Context.Service<PortalSessionRepo, TenantScoped<{
  readonly insert: (tenant: Tenant, session: StoredPortalSession) => Effect.Effect<void>
  /**
   * The link's one use: sets the cookie's hash on the session whose link hash
   * this is, if it was never exchanged, is not revoked and lasts beyond `now`.
   * None otherwise (the caller reads the row to say why).
   */
  readonly claimLink: (linkHash: string, cookieHash: string, now: string) => Effect.Effect<Option.Option<StoredPortalSession>>
  readonly findByLinkHash: (linkHash: string) => Effect.Effect<Option.Option<StoredPortalSession>>
  readonly findByCookieHash: (cookieHash: string) => Effect.Effect<Option.Option<StoredPortalSession>>
  /** Ends the tenant's session now; false when there is none of that id (or it was revoked already). */
  readonly revoke: (tenant: Tenant, id: PortalSessionId, now: string) => Effect.Effect<boolean>
  /** Deletes sessions that expired before `before`; how many went. */
  readonly purgeExpired: (before: string) => Effect.Effect<number>
}, PortalCrossTenant>>()("@opsplatform/core/webhooks/PortalSessionRepo") {
  static readonly layerSql: Layer.Layer<PortalSessionRepo, never, SqlClient.SqlClient> = Layer.effect(
    PortalSessionRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const sessions = table(sql, { name: "webhook_portal_sessions", row: PortalSessionRow })
      return PortalSessionRepo.of({
        insert: (tenant, session) =>
          orDie(sessions.insert({ ...session, organization_id: tenant.organizationId, environment: tenant.environment })),
        claimLink: (linkHash, cookieHash, now) =>
          sessions.one(sql`UPDATE webhook_portal_sessions SET cookie_hash = ${cookieHash}, exchanged_at = ${now}
            WHERE link_hash = ${linkHash} AND exchanged_at IS NULL AND revoked_at IS NULL AND expires_at > ${now}
            RETURNING *`),
        findByLinkHash: (hash) => sessions.one(sql`SELECT * FROM webhook_portal_sessions WHERE link_hash = ${hash}`),
        findByCookieHash: (hash) => sessions.one(sql`SELECT * FROM webhook_portal_sessions WHERE cookie_hash = ${hash}`),
        revoke: (tenant, id, now) =>
          orDie(sql`UPDATE webhook_portal_sessions SET revoked_at = ${now}
            WHERE organization_id = ${tenant.organizationId} AND environment = ${tenant.environment}
              AND id = ${id} AND revoked_at IS NULL RETURNING id`).pipe(Effect.map((rows) => rows.length > 0)),
        purgeExpired: (before) =>
          orDie(sql`DELETE FROM webhook_portal_sessions WHERE expires_at <= ${before} RETURNING id`).pipe(
            Effect.map((rows) => rows.length)
          )
      })
    })
  )
}
