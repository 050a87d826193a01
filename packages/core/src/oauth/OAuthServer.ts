import { Clock, Context, Effect, Layer, Option } from "effect"
import { Digest, type Kdf, Mac, type SecureRandom } from "effect/crypto"
import { Credentials } from "../auth/Credentials.ts"
import { tokenPrefixes } from "../auth/model.ts"
import {
  constantTimeEqualStrings,
  encodeBase64Url,
  generateToken,
  hashLowEntropy,
  hashToken,
  verifyLowEntropy
} from "../auth/secrets.ts"
import { RateLimiter } from "../ratelimit/RateLimiter.ts"
import { Ids } from "../shared/Ids.ts"
import { isUuid } from "../shared/schemas.ts"
import { isoFromMillis } from "../shared/time.ts"
import { environments, type Environment } from "../shared/tenant.ts"
import { Transactor } from "../shared/Transactor.ts"
import type { Organization, User } from "../tenancy/model.ts"
import { TenancyRepo } from "../tenancy/TenancyRepo.ts"
import {
  AuthorizeTargetInvalid,
  ConsentChoiceInvalid,
  InteractionRefused,
  OAuthError,
  type OAuthErrorCode,
  SignInFailed,
  SignInThrottled
} from "./errors.ts"
import { OAuthLifetimes, oauthPrefixes, signInPolicy } from "./lifetimes.ts"
import type { BrowserSession, Grant, PendingAuthorization, StoredApp } from "./model.ts"
import { OAuthAppRepo } from "./OAuthAppRepo.ts"
import { OAuthGrantRepo } from "./OAuthGrantRepo.ts"
import { OAuthSessionRepo } from "./OAuthSessionRepo.ts"
import { grantRevoker } from "./revocation.ts"
import {
  chooseInstallation,
  codeState,
  formatScopes,
  intersectScopes,
  isCodeVerifier,
  isS256Challenge,
  matchRedirectUri,
  parseScopeParameter,
  pkceMatches,
  refreshExpiry,
  refreshState,
  scopesOutside
} from "./rules.ts"

/** A successful token response (RFC 6749 §5.1). */
export interface TokenResponse {
  readonly access_token: string
  readonly token_type: "Bearer"
  readonly expires_in: number
  readonly refresh_token?: string
  readonly scope: string
}

/** Where the browser goes after a decision, and with which query parameters (the adapter adds `iss`). */
export interface AuthorizationRedirect {
  readonly redirectUri: string
  readonly params: ReadonlyArray<readonly [string, string]>
}

/**
 * What the consent page shows for a pending request. `csrf` is the token its
 * form must send back: an HMAC of the request handle under the browser's
 * session token, so only a page served to that browser can know it.
 */
export interface InteractionView {
  readonly pending: PendingAuthorization
  readonly app: StoredApp
  readonly user: User | null
  readonly organizations: ReadonlyArray<Organization>
  readonly csrf: string
}

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

export interface AuthorizeParameters {
  readonly responseType: string | undefined
  readonly scope: string | undefined
  readonly codeChallenge: string | undefined
  readonly codeChallengeMethod: string | undefined
}

const fail = (error: OAuthErrorCode, description: string) =>
  Effect.fail(new OAuthError({ error, description }))

const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000)

/** The longest token we ever issue is well under this; longer input is not ours. */
const MAX_TOKEN_LENGTH = 200

/**
 * The OAuth 2.0 authorization server: client authentication, the authorize
 * request and its consent interaction, the token endpoint's three grants,
 * revocation (RFC 7009) and introspection (RFC 7662). Transport-free: the HTTP
 * adapter parses requests into these calls and renders their results.
 */
export class OAuthServer extends Context.Service<OAuthServer, {
  /** `secret` undefined: a public client identifying itself by client_id only. */
  readonly authenticateClient: (clientId: string, secret: string | undefined) => Effect.Effect<StoredApp, OAuthError>
  /** The client and redirect URI of an authorize request, checked before anything may redirect. */
  readonly authorizeTarget: (
    clientId: string | undefined,
    redirectUri: string | undefined
  ) => Effect.Effect<{ readonly app: StoredApp; readonly redirectUri: string }, AuthorizeTargetInvalid>
  /** The rest of an authorize request; failures go back to the client's redirect URI. Returns the scopes asked for. */
  readonly checkAuthorizeRequest: (app: StoredApp, params: AuthorizeParameters) => Effect.Effect<ReadonlyArray<string>, OAuthError>
  /** Keeps the request server-side under a new opaque handle, bound to this browser's session (made if needed). */
  readonly startInteraction: (
    sessionToken: string | undefined,
    request: {
      readonly app: StoredApp
      readonly redirectUri: string
      readonly scopes: ReadonlyArray<string>
      readonly state: string | undefined
      readonly codeChallenge: string
    }
  ) => Effect.Effect<{ readonly handle: string; readonly newSessionToken: string | undefined }>
  readonly viewInteraction: (handle: string, sessionToken: string | undefined) => Effect.Effect<InteractionView, InteractionRefused>
  readonly signIn: (
    input: { readonly handle: string; readonly sessionToken: string | undefined; readonly csrf: string; readonly email: string; readonly password: string }
  ) => Effect.Effect<{ readonly sessionToken: string }, InteractionRefused | SignInFailed | SignInThrottled>
  readonly decide: (
    input: {
      readonly handle: string
      readonly sessionToken: string | undefined
      readonly csrf: string
      readonly decision:
        | { readonly approve: false }
        | { readonly approve: true; readonly organizationId: string; readonly environment: string }
    }
  ) => Effect.Effect<AuthorizationRedirect, InteractionRefused | ConsentChoiceInvalid>
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
  readonly revoke: (app: StoredApp, token: string | undefined) => Effect.Effect<void, OAuthError>
  readonly introspect: (app: StoredApp, token: string | undefined) => Effect.Effect<Introspection, OAuthError>
}>()("@opsplatform/core/oauth/OAuthServer") {
  static readonly layer: Layer.Layer<
    OAuthServer,
    never,
    | OAuthAppRepo
    | OAuthGrantRepo
    | OAuthSessionRepo
    | TenancyRepo
    | Credentials
    | RateLimiter
    | Ids
    | Transactor
    | Digest.Digest
    | Kdf.Kdf
    | Mac.Mac
    | SecureRandom.SecureRandom
  > = Layer.effect(
    OAuthServer,
    Effect.gen(function*() {
      const apps = yield* OAuthAppRepo
      const grants = yield* OAuthGrantRepo
      const sessions = yield* OAuthSessionRepo
      const tenancy = yield* TenancyRepo
      const credentials = yield* Credentials
      const limiter = yield* RateLimiter
      const ids = yield* Ids
      const tx = yield* Transactor
      const revokeGrants = grantRevoker(grants, credentials, tx)
      const crypto = yield* Effect.context<Digest.Digest | Kdf.Kdf | Mac.Mac | SecureRandom.SecureRandom>()
      const withCrypto = <A, E>(eff: Effect.Effect<A, E, Digest.Digest | Kdf.Kdf | Mac.Mac | SecureRandom.SecureRandom>) =>
        Effect.provideContext(eff, crypto)
      const hash = (value: string) => withCrypto(hashToken(value))
      const random = withCrypto(generateToken(""))
      const sha256 = (value: string) =>
        withCrypto(Effect.flatMap(Digest.Digest, (d) => d.digest(Digest.sha256, new TextEncoder().encode(value))))
      // Unknown emails are checked against this, so a miss costs as much as a wrong password.
      const decoyHash = yield* withCrypto(hashLowEntropy("decoy password, never a member's"))

      const lifetimes = OAuthLifetimes
      const now = Clock.currentTimeMillis

      const appByClientId = (clientId: string) =>
        clientId.length > 100 ? Effect.succeedNone : apps.findAppByClientId(clientId)

      const matchesHash = (stored: string | null, value: string) =>
        Effect.map(hash(value), (h) => stored !== null && constantTimeEqualStrings(stored, h))

      // ---------------------------------------------------------------- tokens

      const issueAccess = (grant: Grant, scopes: ReadonlyArray<string>, nowMs: number) =>
        Effect.flatMap(lifetimes, (l) =>
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
          const l = yield* lifetimes
          const token = yield* withCrypto(generateToken(oauthPrefixes.refreshToken))
          yield* grants.insertRefreshToken({
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

      const respond = (access: { token: string; expiresIn: number }, scopes: ReadonlyArray<string>, refresh?: string): TokenResponse => ({
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

      const stillMember = (grant: Grant) =>
        grant.user_id === null
          ? Effect.succeed(true)
          : Effect.map(tenancy.findMember(grant.organization_id, grant.user_id), Option.isSome)

      // ---------------------------------------------------------------- interaction

      const refused = (reason: string, status: 400 | 403 = 400) => Effect.fail(new InteractionRefused({ reason, status }))

      const loadInteraction = Effect.fnUntraced(function*(handle: string, sessionToken: string | undefined) {
        if (handle.length === 0 || handle.length > MAX_TOKEN_LENGTH) {
          return yield* refused("This authorization request is unknown. Start again from the app.")
        }
        const found = yield* sessions.findPendingByHash(yield* hash(handle))
        const nowMs = yield* now
        if (Option.isNone(found)) {
          return yield* refused("This authorization request is unknown or was already answered. Start again from the app.")
        }
        const pending = found.value
        if (Date.parse(pending.expires_at) <= nowMs) {
          return yield* refused("This authorization request has expired. Start again from the app.")
        }
        const session: Option.Option<BrowserSession> = sessionToken === undefined || sessionToken.length > MAX_TOKEN_LENGTH
          ? Option.none()
          : yield* sessions.findSessionByHash(yield* hash(sessionToken))
        if (
          Option.isNone(session) || session.value.id !== pending.session_id || Date.parse(session.value.expires_at) <= nowMs
        ) {
          return yield* refused("This authorization request was started in another browser. Start again from the app.", 403)
        }
        const app = yield* apps.findAppById(pending.app_id)
        if (Option.isNone(app)) return yield* refused("The app of this authorization request no longer exists.")
        return { pending, session: session.value, sessionToken: sessionToken!, app: app.value }
      })

      const encoder = new TextEncoder()
      const csrfFor = (sessionToken: string, handle: string) =>
        withCrypto(Effect.gen(function*() {
          const mac = yield* Mac.Mac
          const key = yield* Mac.key(Mac.hmacSha256, encoder.encode(sessionToken))
          return encodeBase64Url(yield* mac.sign(key, encoder.encode(`consent-form:${handle}`)))
        })).pipe(Effect.orDie)

      const checkCsrf = (sessionToken: string, handle: string, csrf: string) =>
        Effect.flatMap(
          csrfFor(sessionToken, handle),
          (expected) =>
            csrf.length > 0 && constantTimeEqualStrings(expected, csrf)
              ? Effect.void
              : refused("The form was not sent by this page or has expired. Reload the page and try again.", 403)
        )

      const newSession = (userId: string | null, nowMs: number) =>
        Effect.gen(function*() {
          const l = yield* lifetimes
          const token = yield* random
          const session: BrowserSession = {
            id: yield* ids.uuid,
            token_hash: yield* hash(token),
            user_id: userId,
            created_at: isoFromMillis(nowMs),
            expires_at: isoFromMillis(nowMs + l.sessionSeconds * 1000)
          }
          yield* sessions.insertSession(session)
          return { token, session }
        })

      return OAuthServer.of({
        authenticateClient: Effect.fn("OAuthServer.authenticateClient")(function*(clientId, secret) {
          const found = yield* appByClientId(clientId)
          if (Option.isNone(found)) return yield* fail("invalid_client", "Unknown client")
          const app = found.value
          if (app.type === "public") {
            if (secret !== undefined) return yield* fail("invalid_client", "A public client has no secret to send")
            return app
          }
          if (secret === undefined) return yield* fail("invalid_client", "This client must authenticate with its client secret")
          const ok = secret.length <= MAX_TOKEN_LENGTH && (yield* matchesHash(app.secret_hash, secret))
          if (!ok) return yield* fail("invalid_client", "Client authentication failed")
          return app
        }),

        authorizeTarget: Effect.fn("OAuthServer.authorizeTarget")(function*(clientId, redirectUri) {
          if (clientId === undefined) return yield* new AuthorizeTargetInvalid({ reason: "The request names no client_id." })
          const found = yield* appByClientId(clientId)
          if (Option.isNone(found)) return yield* new AuthorizeTargetInvalid({ reason: "No app has this client_id." })
          if (redirectUri === undefined) {
            return yield* new AuthorizeTargetInvalid({ reason: "The request names no redirect_uri." })
          }
          if (matchRedirectUri(found.value.redirect_uris, redirectUri) === undefined) {
            return yield* new AuthorizeTargetInvalid({ reason: "The redirect_uri is not one this app registered." })
          }
          return { app: found.value, redirectUri }
        }),

        checkAuthorizeRequest: Effect.fn("OAuthServer.checkAuthorizeRequest")(function*(app, p) {
          if (p.responseType !== "code") {
            return yield* fail("unsupported_response_type", "response_type must be code")
          }
          if (!app.grant_types.includes("authorization_code")) {
            return yield* fail("unauthorized_client", "This app may not use the authorization_code grant")
          }
          if (p.codeChallenge === undefined) {
            return yield* fail("invalid_request", "code_challenge is required: PKCE with S256")
          }
          if (p.codeChallengeMethod !== "S256") {
            return yield* fail("invalid_request", "code_challenge_method must be S256; plain is not accepted")
          }
          if (!isS256Challenge(p.codeChallenge)) {
            return yield* fail("invalid_request", "code_challenge must be the 43-character base64url SHA-256 of the code verifier")
          }
          if (p.scope === undefined) return yield* fail("invalid_scope", "scope is required")
          const parsed = parseScopeParameter(p.scope)
          if (parsed.unknown.length > 0) return yield* fail("invalid_scope", `Unknown scopes: ${parsed.unknown.join(" ")}`)
          if (parsed.scopes.length === 0) return yield* fail("invalid_scope", "scope names no scope")
          const outside = scopesOutside(parsed.scopes, app.scopes)
          if (outside.length > 0) {
            return yield* fail("invalid_scope", `This app may not ask for ${outside.join(" ")}`)
          }
          return parsed.scopes
        }),

        startInteraction: Effect.fn("OAuthServer.startInteraction")(function*(sessionToken, request) {
          const nowMs = yield* now
          const l = yield* lifetimes
          // Each new request sweeps the expired ones (and expired sessions) away, so neither piles up.
          yield* sessions.purgeExpired(isoFromMillis(nowMs))
          const existing = sessionToken === undefined || sessionToken.length > MAX_TOKEN_LENGTH
            ? Option.none<BrowserSession>()
            : Option.filter(
              yield* sessions.findSessionByHash(yield* hash(sessionToken)),
              (s) => Date.parse(s.expires_at) > nowMs
            )
          const created = Option.isNone(existing) ? yield* newSession(null, nowMs) : undefined
          const session = created?.session ?? Option.getOrThrow(existing)
          const handle = yield* random
          yield* sessions.insertPending({
            id: yield* ids.uuid,
            handle_hash: yield* hash(handle),
            session_id: session.id,
            app_id: request.app.id,
            redirect_uri: request.redirectUri,
            scopes: request.scopes,
            state: request.state ?? null,
            code_challenge: request.codeChallenge,
            created_at: isoFromMillis(nowMs),
            expires_at: isoFromMillis(nowMs + l.pendingSeconds * 1000)
          })
          return { handle, newSessionToken: created?.token }
        }),

        viewInteraction: Effect.fn("OAuthServer.viewInteraction")(function*(handle, sessionToken) {
          const loaded = yield* loadInteraction(handle, sessionToken)
          const { app, pending, session } = loaded
          const csrf = yield* csrfFor(loaded.sessionToken, handle)
          let user: User | null = null
          let organizations: ReadonlyArray<Organization> = []
          if (session.user_id !== null) {
            user = Option.getOrNull(yield* tenancy.findUser(session.user_id))
            organizations = user === null ? [] : yield* tenancy.listOrganizationsOfUser(user.id)
          }
          return { pending, app, user, organizations, csrf }
        }),

        signIn: Effect.fn("OAuthServer.signIn")(function*(input) {
          const { session, sessionToken } = yield* loadInteraction(input.handle, input.sessionToken)
          yield* checkCsrf(sessionToken, input.handle, input.csrf)
          const email = input.email.trim().toLowerCase()
          // Keyed by a hash: the counters table never holds an email address.
          const attemptKey = `${signInPolicy.name}:${yield* hash(email)}`
          const attempt = yield* limiter.consume(attemptKey, signInPolicy)
          if (!attempt.allowed) return yield* new SignInThrottled({ retryAfterSec: attempt.resetSeconds })
          const user = input.email.length > 254 ? Option.none() : yield* tenancy.findUserByEmail(email)
          const stored = Option.match(user, { onNone: () => null, onSome: (u) => u.password_hash })
          const password = input.password.slice(0, 200)
          const ok = yield* withCrypto(verifyLowEntropy(password, stored ?? decoyHash))
          if (!ok || stored === null || Option.isNone(user)) return yield* new SignInFailed()
          // Only failed attempts count against the account.
          yield* limiter.refund(attemptKey, signInPolicy)
          const nowMs = yield* now
          const l = yield* lifetimes
          const token = yield* random
          yield* sessions.signInSession(session.id, yield* hash(token), user.value.id, isoFromMillis(nowMs + l.sessionSeconds * 1000))
          return { sessionToken: token }
        }),

        decide: Effect.fn("OAuthServer.decide")(function*(input) {
          const { pending, session, sessionToken } = yield* loadInteraction(input.handle, input.sessionToken)
          yield* checkCsrf(sessionToken, input.handle, input.csrf)
          const state: ReadonlyArray<readonly [string, string]> = pending.state === null ? [] : [["state", pending.state]]
          const taken = (effect: Effect.Effect<AuthorizationRedirect, InteractionRefused>) =>
            tx.withTransaction(Effect.gen(function*() {
              if (Option.isNone(yield* sessions.takePending(pending.id))) {
                return yield* refused("This authorization request was already answered.")
              }
              return yield* effect
            }))
          if (!input.decision.approve) {
            return yield* taken(Effect.succeed({
              redirectUri: pending.redirect_uri,
              params: [["error", "access_denied"], ["error_description", "The member denied the request"], ...state]
            }))
          }
          if (session.user_id === null) return yield* refused("Sign in before you approve.", 403)
          const { environment, organizationId } = input.decision
          if (!environments.includes(environment as Environment)) {
            return yield* new ConsentChoiceInvalid({ reason: "Choose the live or the sandbox environment." })
          }
          if (!isUuid(organizationId) || Option.isNone(yield* tenancy.findMember(organizationId, session.user_id))) {
            return yield* new ConsentChoiceInvalid({ reason: "Choose an organization you are a member of." })
          }
          const userId = session.user_id
          return yield* taken(Effect.gen(function*() {
            const nowMs = yield* now
            const l = yield* lifetimes
            const code = yield* random
            yield* grants.insertCode({
              id: yield* ids.uuid,
              code_hash: yield* hash(code),
              app_id: pending.app_id,
              grant_id: yield* ids.uuid,
              organization_id: organizationId,
              environment: environment as Environment,
              user_id: userId,
              redirect_uri: pending.redirect_uri,
              code_challenge: pending.code_challenge,
              scopes: pending.scopes,
              created_at: isoFromMillis(nowMs),
              expires_at: isoFromMillis(nowMs + l.codeSeconds * 1000),
              used_at: null
            })
            return { redirectUri: pending.redirect_uri, params: [["code", code], ...state] }
          }))
        }),

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
          const replay = Effect.andThen(
            revokeGrants([code.grant_id]),
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
          const l = yield* lifetimes
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
            if (Option.isNone(yield* grants.consumeCode(code.id, isoFromMillis(nowMs)))) return undefined
            yield* grants.insertGrant(grant)
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
            revokeGrants([token.grant_id]),
            fail("invalid_grant", "The refresh token was already used; the whole grant is revoked")
          )
          const nowMs = yield* now
          switch (refreshState(token, grant, nowMs)) {
            case "reused":
              return yield* reuse
            case "revoked":
              return yield* fail("invalid_grant", "The refresh token is revoked")
            case "expired":
              return yield* fail("invalid_grant", "The refresh token has expired")
            case "active":
              break
          }
          const live = grant!
          const requested = yield* requestedScopes(input.scope, live.scopes, "the scopes of the grant")
          const scopes = yield* effectiveScopes(app, requested)
          if (!(yield* stillMember(live))) {
            yield* revokeGrants([live.id])
            return yield* fail("invalid_grant", "The member who approved left the organization; the grant is revoked")
          }
          const issued = yield* tx.withTransaction(Effect.gen(function*() {
            if (Option.isNone(yield* grants.consumeRefreshToken(token.id, isoFromMillis(nowMs)))) return undefined
            const refresh = yield* issueRefresh(live, token.id, nowMs)
            return respond(yield* issueAccess(live, scopes, nowMs), scopes, refresh)
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
          if (input.environment !== undefined && !environments.includes(input.environment as Environment)) {
            return yield* fail("invalid_request", "environment must be live or sandbox")
          }
          const choice = chooseInstallation(yield* apps.installationsOfApp(app.id), {
            organizationId: input.organizationId,
            environment: input.environment as Environment | undefined
          })
          if (choice._tag === "NotInstalled") {
            return yield* fail(
              "invalid_request",
              input.organizationId === undefined && input.environment === undefined
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
        }),

        revoke: Effect.fn("OAuthServer.revoke")(function*(app, token) {
          if (token === undefined) return yield* fail("invalid_request", "token is required")
          if (token.length > MAX_TOKEN_LENGTH) return
          if (token.startsWith(oauthPrefixes.refreshToken)) {
            const found = yield* grants.findRefreshTokenByHash(yield* hash(token))
            if (Option.isNone(found)) return
            if (found.value.app_id !== app.id) return yield* fail("invalid_grant", "The token was issued to another client")
            return yield* revokeGrants([found.value.grant_id])
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
          const inactive: Introspection = { active: false }
          if (token.length > MAX_TOKEN_LENGTH) return inactive
          const nowMs = yield* now
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
      })
    })
  )
}
