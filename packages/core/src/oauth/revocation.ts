import { Clock, Effect, Option } from "effect"
import { Credentials } from "../auth/Credentials.ts"
import { tokenPrefixes } from "../auth/model.ts"
import type { Environment, Tenant } from "../shared/tenant.ts"
import { nowIso } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import type { OAuthError } from "./errors.ts"
import { oauthPrefixes } from "./lifetimes.ts"
import type { StoredApp } from "./model.ts"
import { OAuthGrantRepo } from "./OAuthGrantRepo.ts"
import { formatScopes, refreshState, tenantOf } from "./rules.ts"
import { fail, MAX_TOKEN_LENGTH, seconds, serverTools } from "./serverTools.ts"

/**
 * Kills grants of one organization environment with everything they issued —
 * the grant, its refresh chain and its access tokens — in one transaction, so
 * no token of a revoked grant outlives the call.
 */
export const grantRevoker = (
  grants: OAuthGrantRepo["Service"],
  credentials: Credentials["Service"],
  tx: Transactor["Service"]
) =>
(tenant: Tenant, ids: ReadonlyArray<string>): Effect.Effect<void> =>
  ids.length === 0 ? Effect.void : tx.withTransaction(Effect.gen(function*() {
    const at = yield* nowIso
    for (const id of ids) {
      yield* grants.revokeGrant(tenant, id, at)
      yield* credentials.revokeGrant(id)
    }
  }))

/** RFC 7662 introspection, with the tenant the token is bound to. */
export type Introspection =
  | { readonly active: false }
  | {
    readonly active: true
    readonly scope: string
    readonly client_id: string
    readonly token_type: "Bearer" | "refresh_token"
    readonly exp: number
    readonly iat: number
    readonly sub: string
    readonly organization_id: string
    readonly environment: Environment
  }

/** Revocation (RFC 7009) and introspection (RFC 7662), beside the token endpoint, for a client already authenticated. */
export interface RevocationEndpoints {
  readonly revoke: (app: StoredApp, token: string | undefined) => Effect.Effect<void, OAuthError>
  readonly introspect: (app: StoredApp, token: string | undefined) => Effect.Effect<Introspection, OAuthError>
}

export const makeRevocationEndpoints = Effect.gen(function*() {
  const grants = yield* OAuthGrantRepo
  const credentials = yield* Credentials
  const revokeGrants = grantRevoker(grants, credentials, yield* Transactor)
  const { hash } = yield* serverTools
  const inactive: Introspection = { active: false }

  const endpoints: RevocationEndpoints = {
    revoke: Effect.fn("OAuthServer.revoke")(function*(app, token) {
      if (token === undefined) return yield* fail("invalid_request", "token is required")
      if (token.length > MAX_TOKEN_LENGTH) return
      if (token.startsWith(oauthPrefixes.refreshToken)) {
        const found = yield* grants.findRefreshTokenByHash(yield* hash(token))
        if (Option.isNone(found)) return
        if (found.value.app_id !== app.id) return yield* fail("invalid_grant", "The token was issued to another client")
        const grant = yield* grants.findGrant(found.value.grant_id)
        if (Option.isSome(grant)) yield* revokeGrants(tenantOf(grant.value), [grant.value.id])
        return
      }
      if (token.startsWith(tokenPrefixes.oauth)) {
        const found = yield* credentials.lookup(token)
        if (Option.isNone(found) || found.value.kind !== "oauth") return
        if (found.value.app_id !== app.id) return yield* fail("invalid_grant", "The token was issued to another client")
        const c = found.value
        yield* Effect.ignore(credentials.revoke({ organizationId: c.organization_id, environment: c.environment }, c.id))
      }
    }),

    introspect: Effect.fn("OAuthServer.introspect")(function*(app, token) {
      if (app.type !== "confidential") {
        return yield* fail("invalid_client", "Introspection is for confidential clients")
      }
      if (token === undefined) return yield* fail("invalid_request", "token is required")
      if (token.length > MAX_TOKEN_LENGTH) return inactive
      const nowMs = yield* Clock.currentTimeMillis
      if (token.startsWith(tokenPrefixes.oauth)) {
        const found = yield* credentials.lookup(token)
        if (Option.isNone(found)) return inactive
        const c = found.value
        if (
          c.kind !== "oauth" || c.app_id !== app.id || c.revoked_at !== null || c.expires_at === null ||
          Date.parse(c.expires_at) <= nowMs
        ) return inactive
        return {
          active: true,
          scope: formatScopes(c.scopes),
          client_id: app.client_id,
          token_type: "Bearer",
          exp: seconds(c.expires_at),
          iat: seconds(c.created_at),
          sub: c.user_id ?? app.client_id,
          organization_id: c.organization_id,
          environment: c.environment
        }
      }
      if (token.startsWith(oauthPrefixes.refreshToken)) {
        const found = yield* grants.findRefreshTokenByHash(yield* hash(token))
        if (Option.isNone(found) || found.value.app_id !== app.id) return inactive
        const grant = Option.getOrUndefined(yield* grants.findGrant(found.value.grant_id))
        if (grant === undefined || refreshState(found.value, grant, nowMs) !== "active") return inactive
        return {
          active: true,
          scope: formatScopes(grant.scopes),
          client_id: app.client_id,
          token_type: "refresh_token",
          exp: seconds(found.value.expires_at),
          iat: seconds(found.value.created_at),
          sub: grant.user_id ?? app.client_id,
          organization_id: grant.organization_id,
          environment: grant.environment
        }
      }
      return inactive
    })
  }
  return endpoints
})
