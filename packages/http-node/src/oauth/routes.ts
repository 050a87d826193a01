import { Duration, Effect, Result } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { OAuthErrors, OAuthLifetimes, type OAuthModel, OAuthServer, Scopes } from "@opsplatform/core"
import { consentPage, errorPage, signInPage } from "./pages.ts"
import { oauthUnavailableWhenDatabaseIs } from "../api/unavailable.ts"
import {
  behindTrustedProxies,
  clientAddressOf,
  clientCredentialsOf,
  describable,
  issuerIsConfigured,
  issuerOf,
  OAuthHttpConfig,
  oauthErrorResponse,
  oauthJson,
  parseParameters,
  protocolHeaders,
  publicUrlIssue,
  readForm
} from "./protocol.ts"

/** The consent page's browser session: HttpOnly, SameSite=Lax, scoped to the OAuth addresses. */
export const SESSION_COOKIE = "opsplatform_oauth_session"

const paths = {
  metadata: "/.well-known/oauth-authorization-server",
  authorize: "/api/oauth/authorize",
  consent: "/api/oauth/consent",
  signIn: "/api/oauth/sign-in",
  token: "/api/oauth/token",
  revoke: "/api/oauth/revoke",
  introspect: "/api/oauth/introspect"
} as const

/** A state longer than this is refused rather than stored. */
const MAX_STATE_LENGTH = 1024

const sessionCookieOf = Effect.map(HttpServerRequest.HttpServerRequest, (r) => r.cookies[SESSION_COOKIE])

const withSessionCookie = (response: HttpServerResponse.HttpServerResponse, token: string | undefined) =>
  token === undefined ? Effect.succeed(response) : Effect.gen(function*() {
    const issuer = yield* issuerOf
    const lifetimes = yield* OAuthLifetimes.OAuthLifetimes
    return HttpServerResponse.setCookieUnsafe(response, SESSION_COOKIE, token, {
      httpOnly: true,
      sameSite: "lax",
      secure: issuer.startsWith("https:"),
      path: "/api/oauth",
      maxAge: Duration.seconds(lifetimes.sessionSeconds)
    })
  })

/** Back to the client's redirect URI with the response parameters and `iss` (RFC 9207). */
const redirectToClient = (redirectUri: string, params: ReadonlyArray<readonly [string, string]>, status: 302 | 303) =>
  Effect.map(issuerOf, (issuer) => {
    const target = new URL(redirectUri)
    for (const [name, value] of params) target.searchParams.append(name, value)
    target.searchParams.append("iss", issuer)
    return HttpServerResponse.redirect(target.toString(), {
      status,
      headers: { "cache-control": "no-store", "referrer-policy": "no-referrer" }
    })
  })

const errorRedirect = (redirectUri: string, error: OAuthErrors.OAuthError, state: string | undefined) =>
  redirectToClient(
    redirectUri,
    [["error", error.error], ["error_description", describable(error.description)], ...(state === undefined ? [] : [["state", state] as const])],
    302
  )

/**
 * An authorize request that fails before the member has done anything: back
 * to the app's redirect URI only when the operator verified the app;
 * otherwise the server's error page, so that an app anyone registered cannot
 * turn the authorization endpoint into an open redirect (RFC 9700 §4.11.2;
 * docs/decisions.md, "OAuth 2.0").
 */
const authorizeFailure = (
  app: OAuthModel.StoredApp,
  redirectUri: string,
  error: OAuthErrors.OAuthError,
  state: string | undefined
) =>
  app.verified_at === null
    ? Effect.succeed(errorPage(400, `The app's request is not valid (${error.error}): ${error.description}.`))
    : errorRedirect(redirectUri, error, state)

/** A page refused for a while: its status and `Retry-After`. */
const retryLater = (page: HttpServerResponse.HttpServerResponse, retryAfterSec: number) =>
  HttpServerResponse.setHeader(page, "retry-after", String(retryAfterSec))

const consentAddress = (handle: string) => `${paths.consent}?request=${encodeURIComponent(handle)}`

/**
 * The OAuth 2.0 endpoints, outside /v1 and its envelope: RFC 8414 metadata,
 * the authorization endpoint with its sign-in and consent pages, the token
 * endpoint, RFC 7009 revocation and RFC 7662 introspection.
 */
export const OAuthRoutes = HttpRouter.use(Effect.fnUntraced(function*(outer) {
  const server = yield* OAuthServer.OAuthServer
  const config = yield* OAuthHttpConfig
  // Every endpoint answers 503 temporarily_unavailable while PostgreSQL cannot be reached, not a 500.
  const router = {
    add: <E, R>(method: "GET" | "POST", path: HttpRouter.PathInput, handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
      outer.add(method, path, oauthUnavailableWhenDatabaseIs(behindTrustedProxies(handler)))
  }
  const issue = config.publicUrl === undefined ? undefined : publicUrlIssue(config.publicUrl)
  if (issue !== undefined) return yield* Effect.die(new Error(`OPSPLATFORM_PUBLIC_URL ${issue}`))

  yield* router.add("GET", paths.metadata, Effect.gen(function*() {
    const issuer = yield* issuerOf
    // Only an issuer from configuration is the same for every request; one read from the request is no shared cache's to keep.
    const caching = (yield* issuerIsConfigured) ? "public, max-age=300" : "no-store"
    return HttpServerResponse.jsonUnsafe({
      issuer,
      authorization_endpoint: `${issuer}${paths.authorize}`,
      token_endpoint: `${issuer}${paths.token}`,
      revocation_endpoint: `${issuer}${paths.revoke}`,
      introspection_endpoint: `${issuer}${paths.introspect}`,
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: ["authorization_code", "refresh_token", "client_credentials"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "none"],
      revocation_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "none"],
      introspection_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      scopes_supported: Scopes.allScopes,
      authorization_response_iss_parameter_supported: true,
      service_documentation: `${issuer}/docs`
    }, { headers: { "cache-control": caching, "access-control-allow-origin": "*" } })
  }))

  yield* router.add("GET", paths.authorize, Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const query = new URL(request.url, "http://query.invalid").searchParams
    const one = (name: string) => {
      const values = query.getAll(name).filter((v) => v !== "")
      return values.length > 1 ? null : values[0]
    }
    const clientId = one("client_id")
    const redirectUri = one("redirect_uri")
    if (clientId === null || redirectUri === null) {
      return errorPage(400, "The request repeats client_id or redirect_uri.")
    }
    const target = yield* Effect.result(server.authorizeTarget(clientId, redirectUri))
    if (Result.isFailure(target)) return errorPage(400, target.failure.reason)
    const { app } = target.success
    // From here on the client and its redirect URI are known good: failures go back to a verified app.
    const parsed = parseParameters(query)
    const stateValue = one("state")
    const state = stateValue === null ? undefined : stateValue
    if (Result.isFailure(parsed)) return yield* authorizeFailure(app, target.success.redirectUri, parsed.failure, state)
    const params = parsed.success
    if (state !== undefined && state.length > MAX_STATE_LENGTH) {
      return yield* authorizeFailure(
        app,
        target.success.redirectUri,
        new OAuthErrors.OAuthError({ error: "invalid_request", description: `state is longer than ${MAX_STATE_LENGTH} characters` }),
        // RFC 6749 §4.1.2.1: the error carries the exact state the request sent, however long.
        state
      )
    }
    const scopes = yield* Effect.result(server.checkAuthorizeRequest(app, {
      responseType: params.get("response_type"),
      scope: params.get("scope"),
      codeChallenge: params.get("code_challenge"),
      codeChallengeMethod: params.get("code_challenge_method")
    }))
    if (Result.isFailure(scopes)) return yield* authorizeFailure(app, target.success.redirectUri, scopes.failure, state)
    const interaction = yield* Effect.result(server.startInteraction(yield* sessionCookieOf, yield* clientAddressOf, {
      app,
      redirectUri: target.success.redirectUri,
      scopes: scopes.success,
      state,
      codeChallenge: params.get("code_challenge")!
    }))
    if (Result.isFailure(interaction)) return retryLater(errorPage(429, interaction.failure.message), interaction.failure.retryAfterSec)
    const started = interaction.success
    return yield* withSessionCookie(
      HttpServerResponse.redirect(consentAddress(started.handle), {
        status: 303,
        headers: { "cache-control": "no-store", "referrer-policy": "no-referrer" }
      }),
      started.newSessionToken
    )
  }))

  /** The page for the request's current step: sign-in until the browser is signed in, then consent. */
  const interactionPage = (handle: string, status: number, error?: { readonly signIn?: string; readonly consent?: string; readonly email?: string }) =>
    Effect.gen(function*() {
      const view = yield* Effect.result(server.viewInteraction(handle, yield* sessionCookieOf))
      if (Result.isFailure(view)) return errorPage(view.failure.status, view.failure.reason)
      const v = view.success
      return v.user === null
        ? signInPage({
          status,
          app: v.app,
          handle,
          csrf: v.csrf,
          redirectUri: v.pending.redirect_uri,
          error: error?.signIn,
          email: error?.email
        })
        : consentPage({
          status,
          app: v.app,
          handle,
          csrf: v.csrf,
          user: v.user,
          organizations: v.organizations,
          scopes: v.pending.scopes,
          redirectUri: v.pending.redirect_uri,
          error: error?.consent
        })
    })

  yield* router.add("GET", paths.consent, Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const handle = new URL(request.url, "http://query.invalid").searchParams.get("request") ?? ""
    return yield* interactionPage(handle, 200)
  }))

  /** The fields of a page's form; an unreadable one is an error page, never a redirect. */
  const pageForm = readForm.pipe(
    Effect.map((form) => ({
      get: (name: string) => form.get(name) ?? "",
      form
    })),
    Effect.mapError((e) => errorPage(400, e.description))
  )

  yield* router.add("POST", paths.signIn, Effect.gen(function*() {
    const form = yield* pageForm
    const handle = form.get("request")
    const outcome = yield* Effect.result(server.signIn({
      handle,
      sessionToken: yield* sessionCookieOf,
      csrf: form.get("csrf"),
      email: form.get("email"),
      password: form.get("password"),
      clientAddress: yield* clientAddressOf
    }))
    if (Result.isSuccess(outcome)) {
      return yield* withSessionCookie(
        HttpServerResponse.redirect(consentAddress(handle), { status: 303, headers: { "cache-control": "no-store" } }),
        outcome.success.sessionToken
      )
    }
    const failure = outcome.failure
    if (failure._tag === "InteractionRefused") return errorPage(failure.status, failure.reason)
    const status = failure._tag === "SignInThrottled" ? 429 : failure._tag === "HashingBusy" ? 503 : 401
    const page = yield* interactionPage(handle, status, {
      signIn: failure._tag === "HashingBusy"
        ? `The server is busy. Try again in ${failure.retryAfterSec} second${failure.retryAfterSec === 1 ? "" : "s"}.`
        : failure.message,
      email: form.get("email").slice(0, 254)
    })
    return failure._tag === "SignInFailed" ? page : retryLater(page, failure.retryAfterSec)
  }).pipe(Effect.catch(Effect.succeed)))

  yield* router.add("POST", paths.consent, Effect.gen(function*() {
    const form = yield* pageForm
    const handle = form.get("request")
    const choice = form.get("decision")
    if (choice !== "approve" && choice !== "deny") return errorPage(400, "The form must say approve or deny.")
    const outcome = yield* Effect.result(server.decide({
      handle,
      sessionToken: yield* sessionCookieOf,
      csrf: form.get("csrf"),
      decision: choice === "deny"
        ? { approve: false }
        : { approve: true, organizationId: form.get("organization_id"), environment: form.get("environment") }
    }))
    if (Result.isSuccess(outcome)) return yield* redirectToClient(outcome.success.redirectUri, outcome.success.params, 303)
    const failure = outcome.failure
    if (failure._tag === "InteractionRefused") return errorPage(failure.status, failure.reason)
    return yield* interactionPage(handle, 400, { consent: failure.reason })
  }).pipe(Effect.catch(Effect.succeed)))

  /** A client-authenticated form endpoint: OAuth JSON errors, nothing cached. */
  const clientEndpoint = (
    handle: (
      app: OAuthModel.StoredApp,
      form: ReadonlyMap<string, string>
    ) => Effect.Effect<HttpServerResponse.HttpServerResponse, OAuthErrors.OAuthError, HttpServerRequest.HttpServerRequest>
  ) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const form = yield* readForm
      const client = yield* Effect.fromResult(clientCredentialsOf(request.headers.authorization, form))
      const app = yield* server.authenticateClient(client.clientId, client.secret)
      return yield* handle(app, form)
    }).pipe(Effect.catchTag("OAuthError", (e) => Effect.succeed(oauthErrorResponse(e))))

  yield* router.add("POST", paths.token, clientEndpoint((app, form) => {
    const grantType = form.get("grant_type")
    const issued = grantType === "authorization_code"
      ? server.exchangeCode(app, { code: form.get("code"), redirectUri: form.get("redirect_uri"), codeVerifier: form.get("code_verifier") })
      : grantType === "refresh_token"
      ? server.refresh(app, { refreshToken: form.get("refresh_token"), scope: form.get("scope") })
      : grantType === "client_credentials"
      ? server.clientCredentials(app, {
        scope: form.get("scope"),
        organizationId: form.get("organization_id"),
        environment: form.get("environment")
      })
      : Effect.fail(
        new OAuthErrors.OAuthError(
          grantType === undefined
            ? { error: "invalid_request", description: "grant_type is required" }
            : { error: "unsupported_grant_type", description: "grant_type must be authorization_code, refresh_token or client_credentials" }
        )
      )
    return Effect.map(issued, (body) => oauthJson(200, body))
  }))

  yield* router.add("POST", paths.revoke, clientEndpoint((app, form) =>
    Effect.as(server.revoke(app, form.get("token")), HttpServerResponse.empty({ status: 200, headers: protocolHeaders }))
  ))

  yield* router.add("POST", paths.introspect, clientEndpoint((app, form) =>
    Effect.gen(function*() {
      const result = yield* server.introspect(app, form.get("token"))
      return oauthJson(200, result.active ? { ...result, iss: yield* issuerOf } : result)
    })
  ))

  for (const path of [paths.token, paths.revoke, paths.introspect]) {
    yield* router.add("GET", path, Effect.succeed(
      oauthJson(405, { error: "invalid_request", error_description: "Use POST with a form-encoded body" }, { allow: "POST" })
    ))
  }
}))
