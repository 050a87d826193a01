import { Clock, Effect, Option } from "effect"
import { Mac } from "effect/crypto"
import { clientNetwork } from "../ratelimit/clientNetwork.ts"
import { type RatePolicy, RateLimiter } from "../ratelimit/RateLimiter.ts"
import { Ids } from "../shared/Ids.ts"
import { isUuid } from "../shared/schemas.ts"
import type { HashingBusy } from "../shared/errors.ts"
import { PasswordHashing } from "../shared/PasswordHashing.ts"
import { constantTimeEqualStrings, encodeBase64Url } from "../shared/secrets.ts"
import { isoFromMillis } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import type { Organization, User } from "../tenancy/model.ts"
import { TenancyRepo } from "../tenancy/TenancyRepo.ts"
import {
  AuthorizeTargetInvalid,
  AuthorizeThrottled,
  ConsentChoiceInvalid,
  InteractionRefused,
  type OAuthError,
  SignInFailed,
  SignInThrottled
} from "./errors.ts"
import {
  authorizeNetworkPolicy,
  OAuthLifetimes,
  OAuthNetworkLimit,
  signInNetworkPolicy,
  signInPolicy,
  signInSessionPolicy
} from "./lifetimes.ts"
import type { BrowserSession, PendingAuthorization, StoredApp } from "./model.ts"
import { OAuthAppRepo } from "./OAuthAppRepo.ts"
import { OAuthGrantRepo } from "./OAuthGrantRepo.ts"
import { OAuthSessionRepo } from "./OAuthSessionRepo.ts"
import { isS256Challenge, matchRedirectUri, parseScopeParameter, scopesOutside } from "./rules.ts"
import { fail, isEnvironment, MAX_TOKEN_LENGTH, serverTools } from "./serverTools.ts"

export interface AuthorizeParameters {
  readonly responseType: string | undefined
  readonly scope: string | undefined
  readonly codeChallenge: string | undefined
  readonly codeChallengeMethod: string | undefined
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

/** The authorization endpoint: the authorize request and its consent interaction (sign-in, then a decision). */
export interface AuthorizationEndpoint {
  /** The client and redirect URI of an authorize request, checked before anything may redirect. */
  readonly authorizeTarget: (
    clientId: string | undefined,
    redirectUri: string | undefined
  ) => Effect.Effect<{ readonly app: StoredApp; readonly redirectUri: string }, AuthorizeTargetInvalid>
  /** The rest of an authorize request; failures go back to the client's redirect URI. Returns the scopes asked for. */
  readonly checkAuthorizeRequest: (app: StoredApp, params: AuthorizeParameters) => Effect.Effect<ReadonlyArray<string>, OAuthError>
  /**
   * Keeps the request server-side under a new opaque handle, bound to this
   * browser's session (made if needed), at most `OAuthNetworkLimit` a minute
   * per client network.
   */
  readonly startInteraction: (
    sessionToken: string | undefined,
    clientAddress: string | undefined,
    request: {
      readonly app: StoredApp
      readonly redirectUri: string
      readonly scopes: ReadonlyArray<string>
      readonly state: string | undefined
      readonly codeChallenge: string
    }
  ) => Effect.Effect<{ readonly handle: string; readonly newSessionToken: string | undefined }, AuthorizeThrottled>
  readonly viewInteraction: (handle: string, sessionToken: string | undefined) => Effect.Effect<InteractionView, InteractionRefused>
  readonly signIn: (
    input: {
      readonly handle: string
      readonly sessionToken: string | undefined
      readonly csrf: string
      readonly email: string
      readonly password: string
      readonly clientAddress: string | undefined
    }
  ) => Effect.Effect<{ readonly sessionToken: string }, InteractionRefused | SignInFailed | SignInThrottled | HashingBusy>
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
}

const refused = (reason: string, status: 400 | 403 = 400) => Effect.fail(new InteractionRefused({ reason, status }))

const encoder = new TextEncoder()

export const makeAuthorizationEndpoint = Effect.gen(function*() {
  const apps = yield* OAuthAppRepo
  const grants = yield* OAuthGrantRepo
  const sessions = yield* OAuthSessionRepo
  const tenancy = yield* TenancyRepo
  const limiter = yield* RateLimiter
  const ids = yield* Ids
  const tx = yield* Transactor
  const hashing = yield* PasswordHashing
  const networkLimit = yield* OAuthNetworkLimit
  const signInNetwork = signInNetworkPolicy(networkLimit.perMinute)
  const authorizeNetwork = authorizeNetworkPolicy(networkLimit.perMinute)
  const { appByClientId, hash, random, withCrypto } = yield* serverTools
  // Unknown emails are checked against this, so a miss costs as much as a wrong password.
  const decoyHash = yield* Effect.orDie(hashing.hash("decoy password, never a member's"))
  const now = Clock.currentTimeMillis

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
    const anotherBrowser = refused(
      "This authorization request was started in another browser. Start again from the app.",
      403
    )
    if (sessionToken === undefined || sessionToken.length > MAX_TOKEN_LENGTH) return yield* anotherBrowser
    const session = yield* sessions.findSessionByHash(yield* hash(sessionToken))
    if (
      Option.isNone(session) || session.value.id !== pending.session_id || Date.parse(session.value.expires_at) <= nowMs
    ) {
      return yield* anotherBrowser
    }
    const app = yield* apps.findAppById(pending.app_id)
    if (Option.isNone(app)) return yield* refused("The app of this authorization request no longer exists.")
    return { pending, session: session.value, sessionToken, app: app.value }
  })

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

  /** Refused once `key` has used up `policy`, before anything is stored or hashed. */
  const within = <E>(key: string, policy: RatePolicy, refusal: (retryAfterSec: number) => E) =>
    Effect.flatMap(limiter.consume(`${policy.name}:${key}`, policy), (d) => d.allowed ? Effect.void : Effect.fail(refusal(d.resetSeconds)))

  // A session that has not signed in lives as long as a request may wait (docs/decisions.md, "Limits and ranges").
  const newSession = (nowMs: number) =>
    Effect.gen(function*() {
      const l = yield* OAuthLifetimes
      const token = yield* random
      const session: BrowserSession = {
        id: yield* ids.uuid,
        token_hash: yield* hash(token),
        user_id: null,
        created_at: isoFromMillis(nowMs),
        expires_at: isoFromMillis(nowMs + l.pendingSeconds * 1000)
      }
      yield* sessions.insertSession(session)
      return { token, session }
    })

  const endpoint: AuthorizationEndpoint = {
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

    startInteraction: Effect.fn("OAuthServer.startInteraction")(function*(sessionToken, clientAddress, request) {
      yield* within(clientNetwork(clientAddress), authorizeNetwork, (retryAfterSec) => new AuthorizeThrottled({ retryAfterSec }))
      const nowMs = yield* now
      const l = yield* OAuthLifetimes
      // Each new request sweeps the expired ones (and expired sessions) away, so neither piles up.
      yield* sessions.purgeExpired(isoFromMillis(nowMs))
      const existing = sessionToken === undefined || sessionToken.length > MAX_TOKEN_LENGTH
        ? Option.none<BrowserSession>()
        : Option.filter(
          yield* sessions.findSessionByHash(yield* hash(sessionToken)),
          (s) => Date.parse(s.expires_at) > nowMs
        )
      const { session, token: newSessionToken } = Option.isSome(existing)
        ? { session: existing.value, token: undefined }
        : yield* newSession(nowMs)
      // A session not signed in yet lasts as long as its newest request.
      const pendingUntil = nowMs + l.pendingSeconds * 1000
      if (session.user_id === null && Date.parse(session.expires_at) < pendingUntil) {
        yield* sessions.signInSession({ ...session, expires_at: isoFromMillis(pendingUntil) })
      }
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
      return { handle, newSessionToken }
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
      // Per network and per browser session before anything is hashed: new emails each cost a derivation.
      yield* within(clientNetwork(input.clientAddress), signInNetwork, (retryAfterSec) =>
        new SignInThrottled({ retryAfterSec, subject: "network" }))
      yield* within(session.id, signInSessionPolicy, (retryAfterSec) => new SignInThrottled({ retryAfterSec, subject: "session" }))
      const email = input.email.trim().toLowerCase()
      // Keyed by a hash: the counters table never holds an email address.
      const attemptKey = `${signInPolicy.name}:${yield* hash(email)}`
      const attempt = yield* limiter.consume(attemptKey, signInPolicy)
      if (!attempt.allowed) return yield* new SignInThrottled({ retryAfterSec: attempt.resetSeconds, subject: "account" })
      const user = input.email.length > 254 ? Option.none() : yield* tenancy.findUserByEmail(email)
      const stored = Option.match(user, { onNone: () => null, onSome: (u) => u.password_hash })
      const password = input.password.slice(0, 200)
      const ok = yield* hashing.verify(password, stored ?? decoyHash).pipe(
        // A refused hash is no attempt on the account.
        Effect.tapError(() => limiter.refund(attemptKey, signInPolicy))
      )
      if (!ok || stored === null || Option.isNone(user)) return yield* new SignInFailed()
      // Only failed attempts count against the account.
      yield* limiter.refund(attemptKey, signInPolicy)
      const nowMs = yield* now
      const l = yield* OAuthLifetimes
      const token = yield* random
      yield* sessions.signInSession({
        ...session,
        token_hash: yield* hash(token),
        user_id: user.value.id,
        expires_at: isoFromMillis(nowMs + l.sessionSeconds * 1000)
      })
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
      if (!isEnvironment(environment)) {
        return yield* new ConsentChoiceInvalid({ reason: "Choose the live or the sandbox environment." })
      }
      if (!isUuid(organizationId) || Option.isNone(yield* tenancy.findMember(organizationId, session.user_id))) {
        return yield* new ConsentChoiceInvalid({ reason: "Choose an organization you are a member of." })
      }
      const userId = session.user_id
      return yield* taken(Effect.gen(function*() {
        const nowMs = yield* now
        const l = yield* OAuthLifetimes
        const code = yield* random
        yield* grants.insertCode({ organizationId, environment }, {
          id: yield* ids.uuid,
          code_hash: yield* hash(code),
          app_id: pending.app_id,
          grant_id: yield* ids.uuid,
          organization_id: organizationId,
          environment,
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
    })
  }
  return endpoint
})
