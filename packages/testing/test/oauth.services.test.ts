import { assert, describe, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { createHash } from "node:crypto"
import { Credentials, OAuthApps, OAuthServer, OAuthSessionRepo, PasswordHashing, Secrets } from "@opsplatform/core"
import { makeFixture, MemoryCore } from "@opsplatform/testing"

const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
const challenge = createHash("sha256").update(verifier).digest("base64url")
const CALLBACK = "http://127.0.0.1/callback"

/** The OAuth services over memory storage, with the test clock. */
describe("OAuth services on memory storage", () => {
  layer(MemoryCore())((it) => {
    const setup = Effect.gen(function*() {
      const f = yield* makeFixture()
      const apps = yield* OAuthApps.OAuthApps
      const app = yield* apps.register(f.live, {
        name: "Memory app",
        type: "confidential",
        redirect_uris: [CALLBACK],
        scopes: ["locations:read", "expenses:read"],
        grant_types: ["authorization_code", "refresh_token", "client_credentials"]
      })
      const server = yield* OAuthServer.OAuthServer
      const stored = yield* server.authenticateClient(app.client_id, app.client_secret!)
      return { f, app, stored, server }
    })

    /** The consent interaction through the service, as the pages drive it. */
    const approve = (s: Effect.Success<typeof setup>, redirectUri = "http://127.0.0.1:4000/callback") =>
      Effect.gen(function*() {
        const { server, stored, f } = s
        const target = yield* server.authorizeTarget(s.app.client_id, redirectUri)
        const scopes = yield* server.checkAuthorizeRequest(target.app, {
          responseType: "code",
          scope: "locations:read",
          codeChallenge: challenge,
          codeChallengeMethod: "S256"
        })
        const started = yield* server.startInteraction(undefined, "192.0.2.1", { app: stored, redirectUri, scopes, state: "st", codeChallenge: challenge })
        const anonymous = started.newSessionToken!
        const view = yield* server.viewInteraction(started.handle, anonymous)
        assert.isNull(view.user)
        const { sessionToken } = yield* server.signIn({
          handle: started.handle,
          sessionToken: anonymous,
          csrf: view.csrf,
          email: `member-${f.organizationId}@example.test`,
          password: "correct horse battery staple",
          clientAddress: "192.0.2.1"
        })
        const consent = yield* server.viewInteraction(started.handle, sessionToken)
        assert.strictEqual(consent.user?.id, f.userId)
        assert.notStrictEqual(consent.csrf, view.csrf)
        const redirect = yield* server.decide({
          handle: started.handle,
          sessionToken,
          csrf: consent.csrf,
          decision: { approve: true, organizationId: f.organizationId, environment: "live" }
        })
        assert.strictEqual(redirect.redirectUri, redirectUri)
        return Object.fromEntries(redirect.params)
      })

    it.effect("approve, exchange, refresh with rotation; a reuse revokes the chain", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const credentials = yield* Credentials.Credentials
        const params = yield* approve(s)
        assert.strictEqual(params.state, "st")
        const first = yield* s.server.exchangeCode(s.stored, { code: params.code, redirectUri: "http://127.0.0.1:4000/callback", codeVerifier: verifier })
        assert.strictEqual(first.scope, "locations:read")
        const principal = yield* credentials.authenticate(first.access_token)
        assert.strictEqual(principal.kind, "oauth")
        assert.strictEqual(principal.appId, s.app.id)
        const second = yield* s.server.refresh(s.stored, { refreshToken: first.refresh_token, scope: undefined })
        const reuse = yield* Effect.flip(s.server.refresh(s.stored, { refreshToken: first.refresh_token, scope: undefined }))
        assert.strictEqual(reuse.error, "invalid_grant")
        assert.strictEqual((yield* Effect.flip(credentials.authenticate(second.access_token)))._tag, "Unauthorized")
      }))

    it.effect("codes expire after 60 s of the test clock", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const params = yield* approve(s)
        yield* TestClock.adjust("61 seconds")
        const expired = yield* Effect.flip(
          s.server.exchangeCode(s.stored, { code: params.code, redirectUri: "http://127.0.0.1:4000/callback", codeVerifier: verifier })
        )
        assert.strictEqual(expired.error, "invalid_grant")
        assert.match(expired.description, /expired/)
      }))

    it.effect("an authorize request expires after 10 minutes and is bound to its browser", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const started = yield* s.server.startInteraction(undefined, "192.0.2.1", {
          app: s.stored,
          redirectUri: CALLBACK,
          scopes: ["locations:read"],
          state: undefined,
          codeChallenge: challenge
        })
        const other = yield* s.server.startInteraction(undefined, "192.0.2.1", {
          app: s.stored,
          redirectUri: CALLBACK,
          scopes: ["locations:read"],
          state: undefined,
          codeChallenge: challenge
        })
        const foreign = yield* Effect.flip(s.server.viewInteraction(started.handle, other.newSessionToken))
        assert.strictEqual(foreign.status, 403)
        yield* TestClock.adjust("11 minutes")
        const late = yield* Effect.flip(s.server.viewInteraction(started.handle, started.newSessionToken))
        assert.match(late.reason, /expired/)
        // The next request sweeps expired requests, and sessions once they expire too.
        const repo = yield* OAuthSessionRepo.OAuthSessionRepo
        const handleHash = yield* Secrets.hashToken(started.handle)
        const sessionHash = yield* Secrets.hashToken(started.newSessionToken!)
        const start = () =>
          s.server.startInteraction(undefined, "192.0.2.1", { app: s.stored, redirectUri: CALLBACK, scopes: ["locations:read"], state: undefined, codeChallenge: challenge })
        // A session that never signed in lives only as long as its request: both went.
        yield* start()
        assert.isTrue((yield* repo.findPendingByHash(handleHash))._tag === "None")
        assert.isTrue((yield* repo.findSessionByHash(sessionHash))._tag === "None")
      }))

    it.effect("client_credentials issues within the installation; uninstalling revokes it", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const apps = yield* OAuthApps.OAuthApps
        const credentials = yield* Credentials.Credentials
        const installation = yield* apps.install(s.f.sandbox, { client_id: s.app.client_id, scopes: ["expenses:read"] })
        const issued = yield* s.server.clientCredentials(s.stored, { scope: undefined, organizationId: undefined, environment: undefined })
        assert.strictEqual(issued.scope, "expenses:read")
        assert.isUndefined(issued.refresh_token)
        assert.strictEqual((yield* credentials.authenticate(issued.access_token)).environment, "sandbox")
        yield* apps.uninstall(s.f.sandbox, installation.id)
        assert.strictEqual((yield* Effect.flip(credentials.authenticate(issued.access_token)))._tag, "Unauthorized")
        const after = yield* Effect.flip(s.server.clientCredentials(s.stored, { scope: undefined, organizationId: undefined, environment: undefined }))
        assert.strictEqual(after.error, "invalid_request")
      }))

    it.effect("deleting an app revokes its tokens and its client stops authenticating", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const apps = yield* OAuthApps.OAuthApps
        const credentials = yield* Credentials.Credentials
        const params = yield* approve(s)
        const t = yield* s.server.exchangeCode(s.stored, { code: params.code, redirectUri: "http://127.0.0.1:4000/callback", codeVerifier: verifier })
        yield* apps.remove(s.f.live, s.app.id)
        assert.strictEqual((yield* Effect.flip(credentials.authenticate(t.access_token)))._tag, "Unauthorized")
        const gone = yield* Effect.flip(s.server.authenticateClient(s.app.client_id, s.app.client_secret!))
        assert.strictEqual(gone.error, "invalid_client")
        assert.strictEqual((yield* Effect.flip(apps.get(s.f.live, s.app.id)))._tag, "NotFound")
      }))

    /** A pending request and its sign-in form's fields, from a client address. */
    const pendingFrom = (s: Effect.Success<typeof setup>, clientAddress: string) =>
      Effect.gen(function*() {
        const started = yield* s.server.startInteraction(undefined, clientAddress, {
          app: s.stored,
          redirectUri: CALLBACK,
          scopes: ["locations:read"],
          state: undefined,
          codeChallenge: challenge
        })
        const view = yield* s.server.viewInteraction(started.handle, started.newSessionToken)
        return (email: string, from = clientAddress) =>
          Effect.flip(s.server.signIn({
            handle: started.handle,
            sessionToken: started.newSessionToken,
            csrf: view.csrf,
            email,
            password: "a wrong password",
            clientAddress: from
          }))
      })

    it.effect("sign-ins are limited per client network and per browser session before any hashing (issue 28, item 3)", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const hashing = yield* PasswordHashing.PasswordHashing
        // 30 a minute from one network, each with a new email; an IPv6 /64 is one network.
        const tries = yield* Effect.forEach(Array.from({ length: 16 }, (_, i) => i), (i) =>
          Effect.flatMap(pendingFrom(s, `2001:db8:1:2::${i + 1}`), (signIn) =>
            Effect.forEach([0, 1], (j) => signIn(`network-${i}-${j}@example.test`))))
        const failures = tries.flat()
        assert.deepStrictEqual(failures.slice(0, 30).map((e) => e._tag), Array(30).fill("SignInFailed"))
        const throttled = failures[30]!
        assert.strictEqual(throttled._tag, "SignInThrottled")
        assert.strictEqual(throttled._tag === "SignInThrottled" && throttled.subject, "network")
        // No derivation was asked for past the limit.
        assert.strictEqual(yield* hashing.inFlight, 0)
        // Another network is not held back; one browser session stops at 20 whatever the emails.
        const signIn = yield* pendingFrom(s, "192.0.2.77")
        const session = yield* Effect.forEach(Array.from({ length: 21 }, (_, i) => i), (i) => signIn(`session-${i}@example.test`))
        assert.deepStrictEqual(session.slice(0, 20).map((e) => e._tag), Array(20).fill("SignInFailed"))
        assert.strictEqual(session[20]!._tag === "SignInThrottled" && session[20]!.subject, "session")
      }))

    it.effect("authorization requests that store a session are limited per client network", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const start = s.server.startInteraction(undefined, "198.51.100.9", {
          app: s.stored,
          redirectUri: CALLBACK,
          scopes: ["locations:read"],
          state: undefined,
          codeChallenge: challenge
        })
        yield* Effect.forEach(Array.from({ length: 30 }, (_, i) => i), () => start)
        const refused = yield* Effect.flip(start)
        assert.strictEqual(refused._tag, "AuthorizeThrottled")
        assert.isAbove(refused.retryAfterSec, 0)
        yield* TestClock.adjust("61 seconds")
        yield* start
      }))
  })
})
