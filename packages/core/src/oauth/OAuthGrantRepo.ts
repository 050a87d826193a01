import { Context, Effect, Layer, Option, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { NullableTimestamp, SpaceSeparated, Timestamp } from "../shared/columns.ts"
import { orDie } from "../shared/sql.ts"
import { table, tenantTable } from "../shared/tables.ts"
import type { Tenant, TenantScoped } from "../shared/tenant.ts"
import { AuthorizationCode, Grant, RefreshToken } from "./model.ts"

export const GrantRow = Grant.mapFields(Struct.assign({
  scopes: SpaceSeparated,
  created_at: Timestamp,
  refresh_until: NullableTimestamp,
  revoked_at: NullableTimestamp
}))

export const AuthorizationCodeRow = AuthorizationCode.mapFields(Struct.assign({
  scopes: SpaceSeparated,
  created_at: Timestamp,
  expires_at: Timestamp,
  used_at: NullableTimestamp
}))

export const RefreshTokenRow = RefreshToken.mapFields(Struct.assign({
  created_at: Timestamp,
  expires_at: Timestamp,
  used_at: NullableTimestamp,
  revoked_at: NullableTimestamp
}))

/** What the protocol reads across organizations, each for the reason given. */
type GrantCrossTenant =
  /** A refresh token found by its hash names its grant, not the grant's organization. */
  | "findGrant"
  /** Deleting an app revokes its grants in every organization that used it. */
  | "liveGrantsOfApp"
  /** The token endpoint knows a code only by its hash until it is found. */
  | "findCodeByHash"
  /** The token, revocation and introspection endpoints know a refresh token only by its hash until it is found. */
  | "findRefreshTokenByHash"

/**
 * Storage port for grants, their authorization codes and their refresh-token
 * chains (hashes only). The two consume operations are the atomic
 * compare-and-set that makes a code or a refresh token single-use even when
 * requests race: of any number of concurrent calls, exactly one gets the row.
 * Refresh tokens belong to the tenant of their grant.
 */
export class OAuthGrantRepo extends Context.Service<OAuthGrantRepo, TenantScoped<{
  readonly insertGrant: (tenant: Tenant, grant: Grant) => Effect.Effect<void>
  readonly findGrant: (id: string) => Effect.Effect<Option.Option<Grant>>
  /** Marks the grant and every refresh token of its chain revoked; true when the grant was live. */
  readonly revokeGrant: (tenant: Tenant, id: string, at: string) => Effect.Effect<boolean>
  /** Ids of the live grants of an app in one organization environment. */
  readonly liveGrantIds: (tenant: Tenant, appId: string) => Effect.Effect<ReadonlyArray<string>>
  /** The live grants of an app in every organization environment. */
  readonly liveGrantsOfApp: (appId: string) => Effect.Effect<ReadonlyArray<Grant>>
  readonly insertCode: (tenant: Tenant, code: AuthorizationCode) => Effect.Effect<void>
  readonly findCodeByHash: (codeHash: string) => Effect.Effect<Option.Option<AuthorizationCode>>
  /** Sets `used_at` when it is still unset; None when another call got there first. */
  readonly consumeCode: (tenant: Tenant, id: string, at: string) => Effect.Effect<Option.Option<AuthorizationCode>>
  /** A new link of the chain of a grant of the tenant. */
  readonly insertRefreshToken: (tenant: Tenant, token: RefreshToken) => Effect.Effect<void>
  readonly findRefreshTokenByHash: (tokenHash: string) => Effect.Effect<Option.Option<RefreshToken>>
  /** Sets `used_at` on a live, unused token; None when it was used or revoked meanwhile. */
  readonly consumeRefreshToken: (tenant: Tenant, id: string, at: string) => Effect.Effect<Option.Option<RefreshToken>>
  /** Every link of a grant's chain, oldest first. */
  readonly chainOf: (tenant: Tenant, grantId: string) => Effect.Effect<ReadonlyArray<RefreshToken>>
}, GrantCrossTenant>>()("@opsplatform/core/oauth/OAuthGrantRepo") {
  static readonly layerSql: Layer.Layer<OAuthGrantRepo, never, SqlClient.SqlClient> = Layer.effect(
    OAuthGrantRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const grants = tenantTable(sql, { name: "oauth_grants", row: GrantRow })
      const anyGrant = table(sql, { name: "oauth_grants", row: GrantRow })
      const codes = tenantTable(sql, { name: "oauth_codes", row: AuthorizationCodeRow })
      const anyCode = table(sql, { name: "oauth_codes", row: AuthorizationCodeRow })
      const refreshTokens = table(sql, { name: "oauth_refresh_tokens", row: RefreshTokenRow })
      // Refresh tokens have no tenant columns: a token is the tenant's when its grant is.
      const ofTenant = (tenant: Tenant) => sql`grant_id IN (SELECT id FROM oauth_grants WHERE ${grants.where(tenant)})`

      return OAuthGrantRepo.of({
        insertGrant: (tenant, grant) => orDie(grants.insert(tenant, grant)),
        findGrant: (id) => anyGrant.one(sql`SELECT * FROM oauth_grants WHERE id = ${id}`),
        revokeGrant: (tenant, id, at) =>
          orDie(Effect.gen(function*() {
            const rows = yield* sql`UPDATE oauth_grants SET revoked_at = ${at}
              WHERE ${grants.where(tenant, [sql`id = ${id}`, sql`revoked_at IS NULL`])} RETURNING id`
            yield* sql`UPDATE oauth_refresh_tokens SET revoked_at = ${at}
              WHERE grant_id = ${id} AND revoked_at IS NULL AND ${ofTenant(tenant)}`
            return rows.length > 0
          })),
        liveGrantIds: (tenant, appId) =>
          orDie(sql<{ readonly id: string }>`SELECT id FROM oauth_grants
            WHERE ${grants.where(tenant, [sql`app_id = ${appId}`, sql`revoked_at IS NULL`])}`).pipe(
            Effect.map((rows) => rows.map((row) => row.id))
          ),
        liveGrantsOfApp: (appId) =>
          anyGrant.all(sql`SELECT * FROM oauth_grants WHERE app_id = ${appId} AND revoked_at IS NULL`),
        insertCode: (tenant, code) => orDie(codes.insert(tenant, code)),
        findCodeByHash: (hash) => anyCode.one(sql`SELECT * FROM oauth_codes WHERE code_hash = ${hash}`),
        consumeCode: (tenant, id, at) =>
          codes.one(sql`UPDATE oauth_codes SET used_at = ${at}
            WHERE ${codes.where(tenant, [sql`id = ${id}`, sql`used_at IS NULL`])} RETURNING *`),
        insertRefreshToken: (tenant, token) =>
          Effect.gen(function*() {
            if (Option.isNone(yield* grants.findById(tenant, token.grant_id))) {
              return yield* Effect.die(new Error("A refresh token was issued under a grant of another tenant"))
            }
            yield* orDie(refreshTokens.insert(token))
          }),
        findRefreshTokenByHash: (hash) =>
          refreshTokens.one(sql`SELECT * FROM oauth_refresh_tokens WHERE token_hash = ${hash}`),
        consumeRefreshToken: (tenant, id, at) =>
          refreshTokens.one(sql`UPDATE oauth_refresh_tokens SET used_at = ${at}
            WHERE id = ${id} AND used_at IS NULL AND revoked_at IS NULL AND ${ofTenant(tenant)} RETURNING *`),
        chainOf: (tenant, grantId) =>
          refreshTokens.all(sql`SELECT * FROM oauth_refresh_tokens
            WHERE grant_id = ${grantId} AND ${ofTenant(tenant)} ORDER BY created_at, id`)
      })
    })
  )
}
