import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { firstRow, orDie, spaceSeparated } from "../shared/sql.ts"
import { toIso } from "../shared/time.ts"
import type { BrowserSession, PendingAuthorization } from "./model.ts"

/**
 * Storage port for the consent page: browser sessions and the authorize
 * requests waiting for their browser to sign in and decide. Only hashes of the
 * session token and the request handle are kept.
 */
export class OAuthSessionRepo extends Context.Service<OAuthSessionRepo, {
  readonly insertSession: (session: BrowserSession) => Effect.Effect<void>
  readonly findSessionByHash: (tokenHash: string) => Effect.Effect<Option.Option<BrowserSession>>
  /** Signs the session in: a new token (so a token planted before sign-in is worthless) and its member. */
  readonly signInSession: (id: string, tokenHash: string, userId: string, expiresAt: string) => Effect.Effect<void>
  readonly insertPending: (pending: PendingAuthorization) => Effect.Effect<void>
  readonly findPendingByHash: (handleHash: string) => Effect.Effect<Option.Option<PendingAuthorization>>
  /** Removes and returns the pending request; None when it was already decided. */
  readonly takePending: (id: string) => Effect.Effect<Option.Option<PendingAuthorization>>
  /** Deletes expired sessions and pending requests; returns how many rows went. */
  readonly purgeExpired: (before: string) => Effect.Effect<number>
}>()("@opsplatform/core/oauth/OAuthSessionRepo") {
  static readonly layerSql: Layer.Layer<OAuthSessionRepo, never, SqlClient.SqlClient> = Layer.effect(
    OAuthSessionRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const toSession = (r: any): BrowserSession => ({
        id: r.id,
        token_hash: r.token_hash,
        user_id: r.user_id,
        created_at: toIso(r.created_at),
        expires_at: toIso(r.expires_at)
      })
      const toPending = (r: any): PendingAuthorization => ({
        id: r.id,
        handle_hash: r.handle_hash,
        session_id: r.session_id,
        app_id: r.app_id,
        redirect_uri: r.redirect_uri,
        scopes: spaceSeparated(r.scopes),
        state: r.state,
        code_challenge: r.code_challenge,
        created_at: toIso(r.created_at),
        expires_at: toIso(r.expires_at)
      })
      return OAuthSessionRepo.of({
        insertSession: (s) =>
          orDie(sql`INSERT INTO oauth_browser_sessions (id, token_hash, user_id, created_at, expires_at)
            VALUES (${s.id}, ${s.token_hash}, ${s.user_id}, ${s.created_at}, ${s.expires_at})`).pipe(Effect.asVoid),
        findSessionByHash: (hash) =>
          orDie(sql`SELECT * FROM oauth_browser_sessions WHERE token_hash = ${hash}`).pipe(Effect.map(firstRow(toSession))),
        signInSession: (id, hash, userId, expiresAt) =>
          orDie(sql`UPDATE oauth_browser_sessions SET token_hash = ${hash}, user_id = ${userId}, expires_at = ${expiresAt}
            WHERE id = ${id}`).pipe(Effect.asVoid),
        insertPending: (p) =>
          orDie(sql`INSERT INTO oauth_pending_authorizations (id, handle_hash, session_id, app_id, redirect_uri, scopes,
              state, code_challenge, created_at, expires_at)
            VALUES (${p.id}, ${p.handle_hash}, ${p.session_id}, ${p.app_id}, ${p.redirect_uri}, ${p.scopes.join(" ")},
              ${p.state}, ${p.code_challenge}, ${p.created_at}, ${p.expires_at})`).pipe(Effect.asVoid),
        findPendingByHash: (hash) =>
          orDie(sql`SELECT * FROM oauth_pending_authorizations WHERE handle_hash = ${hash}`).pipe(
            Effect.map(firstRow(toPending))
          ),
        takePending: (id) =>
          orDie(sql`DELETE FROM oauth_pending_authorizations WHERE id = ${id} RETURNING *`).pipe(
            Effect.map(firstRow(toPending))
          ),
        purgeExpired: (before) =>
          orDie(Effect.gen(function*() {
            const pending = yield* sql`DELETE FROM oauth_pending_authorizations WHERE expires_at <= ${before} RETURNING id`
            const sessions = yield* sql`DELETE FROM oauth_browser_sessions WHERE expires_at <= ${before} RETURNING id`
            return pending.length + sessions.length
          }))
      })
    })
  )
}
