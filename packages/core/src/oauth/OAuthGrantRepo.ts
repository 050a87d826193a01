import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { firstRow, orDie, spaceSeparated } from "../shared/sql.ts"
import type { Tenant } from "../shared/tenant.ts"
import { toIso, toIsoOrNull } from "../shared/time.ts"
import type { AuthorizationCode, Grant, RefreshToken } from "./model.ts"

/**
 * Storage port for grants, their authorization codes and their refresh-token
 * chains (hashes only). The two consume operations are the atomic
 * compare-and-set that makes a code or a refresh token single-use even when
 * requests race: of any number of concurrent calls, exactly one gets the row.
 */
export class OAuthGrantRepo extends Context.Service<OAuthGrantRepo, {
  readonly insertGrant: (grant: Grant) => Effect.Effect<void>
  readonly findGrant: (id: string) => Effect.Effect<Option.Option<Grant>>
  /** Marks the grant and every refresh token of its chain revoked; true when the grant was live. */
  readonly revokeGrant: (id: string, at: string) => Effect.Effect<boolean>
  /** Ids of the live grants of an app, in one organization environment or everywhere. */
  readonly liveGrantIds: (appId: string, tenant: Tenant | undefined) => Effect.Effect<ReadonlyArray<string>>
  readonly insertCode: (code: AuthorizationCode) => Effect.Effect<void>
  readonly findCodeByHash: (codeHash: string) => Effect.Effect<Option.Option<AuthorizationCode>>
  /** Sets `used_at` when it is still unset; None when another call got there first. */
  readonly consumeCode: (id: string, at: string) => Effect.Effect<Option.Option<AuthorizationCode>>
  readonly insertRefreshToken: (token: RefreshToken) => Effect.Effect<void>
  readonly findRefreshTokenByHash: (tokenHash: string) => Effect.Effect<Option.Option<RefreshToken>>
  /** Sets `used_at` on a live, unused token; None when it was used or revoked meanwhile. */
  readonly consumeRefreshToken: (id: string, at: string) => Effect.Effect<Option.Option<RefreshToken>>
  /** Every link of a grant's chain, oldest first. */
  readonly chainOf: (grantId: string) => Effect.Effect<ReadonlyArray<RefreshToken>>
}>()("@opsplatform/core/oauth/OAuthGrantRepo") {
  static readonly layerSql: Layer.Layer<OAuthGrantRepo, never, SqlClient.SqlClient> = Layer.effect(
    OAuthGrantRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const toGrant = (r: any): Grant => ({
        id: r.id,
        app_id: r.app_id,
        kind: r.kind,
        organization_id: r.organization_id,
        environment: r.environment,
        user_id: r.user_id,
        installation_id: r.installation_id,
        scopes: spaceSeparated(r.scopes),
        created_at: toIso(r.created_at),
        refresh_until: toIsoOrNull(r.refresh_until),
        revoked_at: toIsoOrNull(r.revoked_at)
      })
      const toCode = (r: any): AuthorizationCode => ({
        id: r.id,
        code_hash: r.code_hash,
        app_id: r.app_id,
        grant_id: r.grant_id,
        organization_id: r.organization_id,
        environment: r.environment,
        user_id: r.user_id,
        redirect_uri: r.redirect_uri,
        code_challenge: r.code_challenge,
        scopes: spaceSeparated(r.scopes),
        created_at: toIso(r.created_at),
        expires_at: toIso(r.expires_at),
        used_at: toIsoOrNull(r.used_at)
      })
      const toRefresh = (r: any): RefreshToken => ({
        id: r.id,
        token_hash: r.token_hash,
        grant_id: r.grant_id,
        app_id: r.app_id,
        parent_id: r.parent_id,
        created_at: toIso(r.created_at),
        expires_at: toIso(r.expires_at),
        used_at: toIsoOrNull(r.used_at),
        revoked_at: toIsoOrNull(r.revoked_at)
      })

      return OAuthGrantRepo.of({
        insertGrant: (g) =>
          orDie(sql`INSERT INTO oauth_grants (id, app_id, kind, organization_id, environment, user_id, installation_id,
              scopes, created_at, refresh_until, revoked_at)
            VALUES (${g.id}, ${g.app_id}, ${g.kind}, ${g.organization_id}, ${g.environment}, ${g.user_id},
              ${g.installation_id}, ${g.scopes.join(" ")}, ${g.created_at}, ${g.refresh_until}, ${g.revoked_at})`).pipe(
            Effect.asVoid
          ),
        findGrant: (id) => orDie(sql`SELECT * FROM oauth_grants WHERE id = ${id}`).pipe(Effect.map(firstRow(toGrant))),
        revokeGrant: (id, at) =>
          orDie(Effect.gen(function*() {
            const rows = yield* sql`UPDATE oauth_grants SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL
              RETURNING id`
            yield* sql`UPDATE oauth_refresh_tokens SET revoked_at = ${at} WHERE grant_id = ${id} AND revoked_at IS NULL`
            return rows.length > 0
          })),
        liveGrantIds: (appId, tenant) =>
          orDie(
            tenant === undefined
              ? sql`SELECT id FROM oauth_grants WHERE app_id = ${appId} AND revoked_at IS NULL`
              : sql`SELECT id FROM oauth_grants WHERE app_id = ${appId} AND organization_id = ${tenant.organizationId}
                  AND environment = ${tenant.environment} AND revoked_at IS NULL`
          ).pipe(Effect.map((rows) => rows.map((r: any) => String(r.id)))),
        insertCode: (c) =>
          orDie(sql`INSERT INTO oauth_codes (id, code_hash, app_id, grant_id, organization_id, environment, user_id,
              redirect_uri, code_challenge, scopes, created_at, expires_at, used_at)
            VALUES (${c.id}, ${c.code_hash}, ${c.app_id}, ${c.grant_id}, ${c.organization_id}, ${c.environment},
              ${c.user_id}, ${c.redirect_uri}, ${c.code_challenge}, ${c.scopes.join(" ")}, ${c.created_at},
              ${c.expires_at}, ${c.used_at})`).pipe(Effect.asVoid),
        findCodeByHash: (hash) =>
          orDie(sql`SELECT * FROM oauth_codes WHERE code_hash = ${hash}`).pipe(Effect.map(firstRow(toCode))),
        consumeCode: (id, at) =>
          orDie(sql`UPDATE oauth_codes SET used_at = ${at} WHERE id = ${id} AND used_at IS NULL RETURNING *`).pipe(
            Effect.map(firstRow(toCode))
          ),
        insertRefreshToken: (t) =>
          orDie(sql`INSERT INTO oauth_refresh_tokens (id, token_hash, grant_id, app_id, parent_id, created_at,
              expires_at, used_at, revoked_at)
            VALUES (${t.id}, ${t.token_hash}, ${t.grant_id}, ${t.app_id}, ${t.parent_id}, ${t.created_at},
              ${t.expires_at}, ${t.used_at}, ${t.revoked_at})`).pipe(Effect.asVoid),
        findRefreshTokenByHash: (hash) =>
          orDie(sql`SELECT * FROM oauth_refresh_tokens WHERE token_hash = ${hash}`).pipe(Effect.map(firstRow(toRefresh))),
        consumeRefreshToken: (id, at) =>
          orDie(sql`UPDATE oauth_refresh_tokens SET used_at = ${at}
            WHERE id = ${id} AND used_at IS NULL AND revoked_at IS NULL RETURNING *`).pipe(Effect.map(firstRow(toRefresh))),
        chainOf: (grantId) =>
          orDie(sql`SELECT * FROM oauth_refresh_tokens WHERE grant_id = ${grantId} ORDER BY created_at, id`).pipe(
            Effect.map((rows) => rows.map(toRefresh))
          )
      })
    })
  )
}
