import { Context, Effect, Layer, type Option, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { SpaceSeparated, Timestamp } from "../shared/columns.ts"
import { orDie } from "../shared/sql.ts"
import { table } from "../shared/tables.ts"
import type { TenantScoped } from "../shared/tenant.ts"
import { BrowserSession, PendingAuthorization } from "./model.ts"

export const BrowserSessionRow = BrowserSession.mapFields(Struct.assign({ created_at: Timestamp, expires_at: Timestamp }))

export const PendingAuthorizationRow = PendingAuthorization.mapFields(Struct.assign({
  scopes: SpaceSeparated,
  created_at: Timestamp,
  expires_at: Timestamp
}))

/**
 * A browser reaches the consent page before its member signs in or picks an
 * organization, so none of these rows has a tenant yet.
 */
type SessionCrossTenant =
  /** A browser arriving at the consent page belongs to no organization. */
  | "insertSession"
  /** The browser is known only by its cookie's hash. */
  | "findSessionByHash"
  /** Signing in names a member, who may belong to several organizations. */
  | "signInSession"
  /** The request waits for its member to pick the organization. */
  | "insertPending"
  /** The request is known only by its handle's hash. */
  | "findPendingByHash"
  /** The decision that takes the request is what picks the organization. */
  | "takePending"
  /** Expiry sweeps every browser's rows. */
  | "purgeExpired"

/**
 * Storage port for the consent page: browser sessions and the authorize
 * requests waiting for their browser to sign in and decide. Only hashes of the
 * session token and the request handle are kept.
 */
export class OAuthSessionRepo extends Context.Service<OAuthSessionRepo, TenantScoped<{
  readonly insertSession: (session: BrowserSession) => Effect.Effect<void>
  readonly findSessionByHash: (tokenHash: string) => Effect.Effect<Option.Option<BrowserSession>>
  /**
   * Stores the session signed in: a new token hash (so a token planted before
   * sign-in is worthless), its member and its new expiry.
   */
  readonly signInSession: (session: BrowserSession) => Effect.Effect<void>
  readonly insertPending: (pending: PendingAuthorization) => Effect.Effect<void>
  readonly findPendingByHash: (handleHash: string) => Effect.Effect<Option.Option<PendingAuthorization>>
  /** Removes and returns the pending request; None when it was already decided. */
  readonly takePending: (id: string) => Effect.Effect<Option.Option<PendingAuthorization>>
  /** Deletes expired sessions and pending requests; returns how many rows went. */
  readonly purgeExpired: (before: string) => Effect.Effect<number>
}, SessionCrossTenant>>()("@opsplatform/core/oauth/OAuthSessionRepo") {
  static readonly layerSql: Layer.Layer<OAuthSessionRepo, never, SqlClient.SqlClient> = Layer.effect(
    OAuthSessionRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const sessions = table(sql, { name: "oauth_browser_sessions", row: BrowserSessionRow, fixed: ["created_at"] })
      const pending = table(sql, { name: "oauth_pending_authorizations", row: PendingAuthorizationRow })
      return OAuthSessionRepo.of({
        insertSession: (session) => orDie(sessions.insert(session)),
        findSessionByHash: (hash) => sessions.one(sql`SELECT * FROM oauth_browser_sessions WHERE token_hash = ${hash}`),
        signInSession: (session) => orDie(sessions.update(session)).pipe(Effect.asVoid),
        insertPending: (request) => orDie(pending.insert(request)),
        findPendingByHash: (hash) =>
          pending.one(sql`SELECT * FROM oauth_pending_authorizations WHERE handle_hash = ${hash}`),
        takePending: (id) => pending.one(sql`DELETE FROM oauth_pending_authorizations WHERE id = ${id} RETURNING *`),
        purgeExpired: (before) =>
          orDie(Effect.gen(function*() {
            const requests = yield* sql`DELETE FROM oauth_pending_authorizations WHERE expires_at <= ${before} RETURNING id`
            const browsers = yield* sql`DELETE FROM oauth_browser_sessions WHERE expires_at <= ${before} RETURNING id`
            return requests.length + browsers.length
          }))
      })
    })
  )
}
