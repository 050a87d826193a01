import { Clock, Effect, Option } from "effect"
import { Digest } from "effect/crypto"
import { Credentials } from "../auth/Credentials.ts"
import { constantTimeEqualStrings, generateToken } from "../shared/secrets.ts"
import { Ids } from "../shared/Ids.ts"
import { isoFromMillis } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { TenancyRepo } from "../tenancy/TenancyRepo.ts"
import type { OAuthError } from "./errors.ts"
import { OAuthLifetimes, oauthPrefixes } from "./lifetimes.ts"
import type { Grant, StoredApp } from "./model.ts"
import { OAuthAppRepo } from "./OAuthAppRepo.ts"
import { OAuthGrantRepo } from "./OAuthGrantRepo.ts"
import { grantRevoker } from "./revocation.ts"
import {
  chooseInstallation,
  codeState,
  formatScopes,
  intersectScopes,
  isCodeVerifier,
  parseScopeParameter,
  pkceMatches,
  refreshExpiry,
  refreshState,
  scopesOutside,
  tenantOf
} from "./rules.ts"
import { fail, isEnvironment, MAX_TOKEN_LENGTH, serverTools } from "./serverTools.ts"

/** A successful token response (RFC 6749 §5.1). */
export interface TokenResponse {
  readonly access_token: string
  readonly token_type: "Bearer"
  readonly expires_in: number
  readonly refresh_token?: string
  readonly scope: string
}

/** The token endpoint's three grants, for a client already authenticated. */
export interface TokenEndpoint {
  readonly exchangeCode: (
    app: StoredApp,
    input: { readonly code: string | undefined; readonly redirectUri: string | undefined; readonly codeVerifier: string | undefined }
  ) => Effect.Effect<TokenResponse, OAuthError>
  readonly refresh: (
    app: StoredApp,
    input: { readonly refreshToken: string | undefined; readonly scope: string | undefined }
  ) => Effect.Effect<TokenResponse, OAuthError>
  readonly clientCredentials: (
    app: StoredApp,
    input: { readonly scope: string | undefined; readonly organizationId: string | undefined; readonly environment: string | undefined }
  ) => Effect.Effect<TokenResponse, OAuthError>
}

const respond = (
  access: { readonly token: string; readonly expiresIn: number },
  scopes: ReadonlyArray<string>,
  refresh?: string
): TokenResponse => ({
  access_token: access.token,
  token_type: "Bearer",
  expires_in: access.expiresIn,
  ...(refresh !== undefined ? { refresh_token: refresh } : {}),
  scope: formatScopes(scopes)
})

/** The scopes a token may carry now: what was granted, within what the app may still ask for. */
const effectiveScopes = (app: StoredApp, granted: ReadonlyArray<string>) => {
  const scopes = intersectScopes(granted, app.scopes)
  return scopes.length === 0
    ? fail("invalid_scope", "The app may no longer ask for any of the granted scopes")
    : Effect.succeed(scopes)
}

/** Parses an optional `scope` parameter that must stay within `limit`. */
const requestedScopes = (scope: string | undefined, limit: ReadonlyArray<string>, what: string) => {
  if (scope === undefined) return Effect.succeed(limit)
  const parsed = parseScopeParameter(scope)
  if (parsed.unknown.length > 0) return fail("invalid_scope", `Unknown scopes: ${parsed.unknown.join(" ")}`)
  if (parsed.scopes.length === 0) return fail("invalid_scope", "scope names no scope")
  const outside = scopesOutside(parsed.scopes, limit)
  if (outside.length > 0) return fail("invalid_scope", `${outside.join(" ")} exceeds ${what}`)
  return Effect.succeed(parsed.scopes)
}

export const makeTokenEndpoint = Effect.gen(function*() {
  const apps = yield* OAuthAppRepo
  const grants = yield* OAuthGrantRepo
  const tenancy = yield* TenancyRepo
  const credentials = yield* Credentials
  const ids = yield* Ids
  const tx = yield* Transactor
  const revokeGrants = grantRevoker(grants, credentials, tx)
  const { hash, withCrypto } = yield* serverTools
  const now = Clock.currentTimeMillis
  const sha256 = (value: string) =>
    withCrypto(Effect.flatMap(Digest.Digest, (d) => d.digest(Digest.sha256, new TextEncoder().encode(value))))

  const issueAccess = (grant: Grant, scopes: ReadonlyArray<string>, nowMs: number) =>
    Effect.flatMap(OAuthLifetimes, (l) =>
      credentials.issueOAuthAccess({
        organizationId: grant.organization_id,
        environment: grant.environment,
        scopes,
        appId: grant.app_id,
        userId: grant.user_id,
        grantId: grant.id,
        expiresAt: isoFromMillis(nowMs + l.accessTokenSeconds * 1000)
      }).pipe(Effect.map((issued) => ({ token: issued.token, expiresIn: l.accessTokenSeconds }))))

  const issueRefresh = (grant: Grant, parentId: string | null, nowMs: number) =>
    Effect.gen(function*() {
      const l = yield* OAuthLifetimes
      const token = yield* withCrypto(generateToken(oauthPrefixes.refreshToken))
      yield* grants.insertRefreshToken(tenantOf(grant), {
        id: yield* ids.uuid,
        token_hash: yield* hash(token),
        grant_id: grant.id,
        app_id: grant.app_id,
        parent_id: parentId,
        created_at: isoFromMillis(nowMs),
        expires_at: refreshExpiry(nowMs, l.refreshIdleSeconds * 1000, grant.refresh_until),
        used_at: null,
        revoked_at: null
      })
      return token
    })

  const stillMember = (grant: Grant) =>
    grant.user_id === null
      ? Effect.succeed(true)
      : Effect.map(tenancy.findMember(grant.organization_id, grant.user_id), Option.isSome)

  const endpoint: TokenEndpoint = {
    exchangeCode: Effect.fn("OAuthServer.exchangeCode")(function*(app, input) {
      if (!app.grant_types.includes("authorization_code")) {
        return yield* fail("unauthorized_client", "This app may not use the authorization_code grant")
      }
      if (input.code === undefined) return yield* fail("invalid_request", "code is required")
      if (input.redirectUri === undefined) return yield* fail("invalid_request", "redirect_uri is required")
      if (input.codeVerifier === undefined) return yield* fail("invalid_request", "code_verifier is required (PKCE)")
      if (!isCodeVerifier(input.codeVerifier)) {
        return yield* fail("invalid_request", "code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~")
      }
      const found = input.code.length > MAX_TOKEN_LENGTH ? Option.none() : yield* grants.findCodeByHash(yield* hash(input.code))
      const code = Option.getOrUndefined(found)
      if (code === undefined) return yield* fail("invalid_grant", "The authorization code is unknown")
      if (code.app_id !== app.id) return yield* fail("invalid_grant", "The authorization code was issued to another client")
      if (code.redirect_uri !== input.redirectUri) {
        return yield* fail("invalid_grant", "redirect_uri differs from the one of the authorization request")
      }
      if (!pkceMatches(code.code_challenge, yield* sha256(input.codeVerifier))) {
        return yield* fail("invalid_grant", "code_verifier does not match the code_challenge")
      }
      const tenant = tenantOf(code)
      const replay = Effect.andThen(
        revokeGrants(tenant, [code.grant_id]),
        fail("invalid_grant", "The authorization code was already used; the tokens it issued are revoked")
      )
      const nowMs = yield* now
      switch (codeState(code, nowMs)) {
        case "used":
          return yield* replay
        case "expired":
          return yield* fail("invalid_grant", "The authorization code has expired")
        case "active":
          break
      }
      const l = yield* OAuthLifetimes
      const grant: Grant = {
        id: code.grant_id,
        app_id: app.id,
        kind: "authorization_code",
        organization_id: code.organization_id,
        environment: code.environment,
        user_id: code.user_id,
        installation_id: null,
        scopes: code.scopes,
        created_at: isoFromMillis(nowMs),
        refresh_until: app.grant_types.includes("refresh_token") ? isoFromMillis(nowMs + l.refreshAbsoluteSeconds * 1000) : null,
        revoked_at: null
      }
      if (!(yield* stillMember(grant))) return yield* fail("invalid_grant", "The member who approved left the organization")
      const scopes = yield* effectiveScopes(app, code.scopes)
      const issued = yield* tx.withTransaction(Effect.gen(function*() {
        if (Option.isNone(yield* grants.consumeCode(tenant, code.id, isoFromMillis(nowMs)))) return undefined
        yield* grants.insertGrant(tenant, grant)
        const access = yield* issueAccess(grant, scopes, nowMs)
        const refresh = grant.refresh_until === null ? undefined : yield* issueRefresh(grant, null, nowMs)
        return respond(access, scopes, refresh)
      }))
      // Another request redeemed the code first: this one is the replay.
      return issued === undefined ? yield* replay : issued
    }),

    refresh: Effect.fn("OAuthServer.refresh")(function*(app, input) {
      if (!app.grant_types.includes("refresh_token")) {
        return yield* fail("unauthorized_client", "This app may not use the refresh_token grant")
      }
      if (input.refreshToken === undefined) return yield* fail("invalid_request", "refresh_token is required")
      const presented = input.refreshToken
      if (!presented.startsWith(oauthPrefixes.refreshToken) || presented.length > MAX_TOKEN_LENGTH) {
        return yield* fail("invalid_grant", "This is not a refresh token")
      }
      const h = yield* hash(presented)
      const token = Option.getOrUndefined(
        Option.filter(yield* grants.findRefreshTokenByHash(h), (t) => constantTimeEqualStrings(t.token_hash, h))
      )
      if (token === undefined) return yield* fail("invalid_grant", "The refresh token is unknown")
      if (token.app_id !== app.id) return yield* fail("invalid_grant", "The refresh token was issued to another client")
      const grant = Option.getOrUndefined(yield* grants.findGrant(token.grant_id))
      const reuse = Effect.andThen(
        // A token always has its grant (the chain is deleted with it); without one there is nothing left to revoke.
        grant === undefined ? Effect.void : revokeGrants(tenantOf(grant), [grant.id]),
        fail("invalid_grant", "The refresh token was already used; the whole grant is revoked")
      )
      const nowMs = yield* now
      const state = refreshState(token, grant, nowMs)
      if (state === "reused") return yield* reuse
      if (state === "revoked" || grant === undefined) return yield* fail("invalid_grant", "The refresh token is revoked")
      if (state === "expired") return yield* fail("invalid_grant", "The refresh token has expired")
      const requested = yield* requestedScopes(input.scope, grant.scopes, "the scopes of the grant")
      const scopes = yield* effectiveScopes(app, requested)
      const tenant = tenantOf(grant)
      if (!(yield* stillMember(grant))) {
        yield* revokeGrants(tenant, [grant.id])
        return yield* fail("invalid_grant", "The member who approved left the organization; the grant is revoked")
      }
      const issued = yield* tx.withTransaction(Effect.gen(function*() {
        if (Option.isNone(yield* grants.consumeRefreshToken(tenant, token.id, isoFromMillis(nowMs)))) return undefined
        const refresh = yield* issueRefresh(grant, token.id, nowMs)
        return respond(yield* issueAccess(grant, scopes, nowMs), scopes, refresh)
      }))
      // A concurrent request rotated this token first: this one is a reuse.
      return issued === undefined ? yield* reuse : issued
    }),

    clientCredentials: Effect.fn("OAuthServer.clientCredentials")(function*(app, input) {
      if (app.type !== "confidential") {
        return yield* fail("unauthorized_client", "client_credentials is for confidential clients only")
      }
      if (!app.grant_types.includes("client_credentials")) {
        return yield* fail("unauthorized_client", "This app may not use the client_credentials grant")
      }
      const { environment, organizationId } = input
      if (environment !== undefined && !isEnvironment(environment)) {
        return yield* fail("invalid_request", "environment must be live or sandbox")
      }
      const choice = chooseInstallation(yield* apps.installationsOfApp(app.id), { organizationId, environment })
      if (choice._tag === "NotInstalled") {
        return yield* fail(
          "invalid_request",
          organizationId === undefined && environment === undefined
            ? "The app is not installed in any organization"
            : "The app is not installed in that organization environment"
        )
      }
      if (choice._tag === "Ambiguous") {
        return yield* fail(
          "invalid_request",
          `The app is installed in ${choice.count} organization environments: send organization_id and environment`
        )
      }
      const installation = choice.installation
      const grant = Option.getOrUndefined(yield* grants.findGrant(installation.id))
      if (grant === undefined || grant.revoked_at !== null) {
        return yield* fail("invalid_request", "The app is not installed in that organization environment")
      }
      const allowed = intersectScopes(installation.scopes, app.scopes)
      const scopes = yield* requestedScopes(input.scope, allowed, "the scopes of the installation")
      if (scopes.length === 0) return yield* fail("invalid_scope", "The installation grants no scope the app may still use")
      const access = yield* issueAccess(grant, scopes, yield* now)
      return respond(access, scopes)
    })
  }
  return endpoint
})
