import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { OAuthModel } from "@opsplatform/core"
import type { Fixture } from "@opsplatform/testing"
import { testDatabases } from "../support/databases.ts"
import { call, seedFixture, shiftedClock, startTestServer, type TestServer } from "../support/server.ts"
import {
  Agent,
  authorizeUrl,
  consentThroughPages,
  hiddenField,
  install,
  MEMBER_PASSWORD,
  memberEmail,
  pkce,
  postForm,
  registerApp,
  verifyApp
} from "./support.ts"

const CALLBACK = "http://127.0.0.1:7777/callback"
const WEB_CALLBACK = "https://client.example/cb"
const TOKEN = "/api/oauth/token"

/** The attack suite: raw requests against the real server, one attack per test. */
for (const db of testDatabases()) {
  describe(`OAuth attacks (${db.name})`, () => {
    const time = shiftedClock()
    let server: TestServer
    let f: Fixture
    let g: Fixture
    let app: OAuthModel.OAuthAppWithSecret
    let other: OAuthModel.OAuthAppWithSecret

    beforeAll(async () => {
      server = await startTestServer(db.choice(), { clock: time.clock })
      f = await seedFixture(server, "Attacked org")
      g = await seedFixture(server, "Other org")
      app = await registerApp(server, f.live, { name: "Victim app", redirect_uris: [CALLBACK, WEB_CALLBACK] })
      other = await registerApp(server, g.live, { name: "Other app", redirect_uris: [CALLBACK] })
      // The protocol's error redirects below are those of an app the operator verified.
      await verifyApp(server, app.client_id)
    })
    afterAll(() => server.close())

    const basic = (a: OAuthModel.OAuthAppWithSecret) => ({ clientId: a.client_id, secret: a.client_secret! })

    const obtainCode = async (
      client: OAuthModel.OAuthAppWithSecret = app,
      options: { scope?: string; environment?: "live" | "sandbox"; redirectUri?: string; member?: Fixture } = {}
    ) => {
      const { challenge, verifier } = await pkce()
      const redirectUri = options.redirectUri ?? CALLBACK
      const member = options.member ?? f
      const callback = await consentThroughPages(
        new Agent(server.url),
        authorizeUrl({
          client_id: client.client_id,
          redirect_uri: redirectUri,
          scope: options.scope ?? "locations:read",
          code_challenge: challenge,
          state: "state-123"
        }),
        { email: memberEmail(member), password: MEMBER_PASSWORD, organizationId: member.organizationId, environment: options.environment ?? "live" }
      )
      expect(callback.searchParams.get("state")).toBe("state-123")
      return { code: callback.searchParams.get("code")!, verifier, redirectUri }
    }

    const exchange = (c: { code: string; verifier: string; redirectUri: string }, client = app) =>
      postForm(server, TOKEN, { grant_type: "authorization_code", code: c.code, code_verifier: c.verifier, redirect_uri: c.redirectUri }, basic(client))

    const tokens = async (options: Parameters<typeof obtainCode>[1] = {}) => {
      const res = await exchange(await obtainCode(app, options))
      expect(res.status, res.text).toBe(200)
      return res.json as { access_token: string; refresh_token: string; scope: string }
    }

    const refresh = (refreshToken: string, extra: Record<string, string> = {}, client = app) =>
      postForm(server, TOKEN, { grant_type: "refresh_token", refresh_token: refreshToken, ...extra }, basic(client))

    const v1 = (token: string, path = "/v1/locations") => call(server, "GET", path, { token })

    /** An authorize request that must come back to the client as an error, never reaching the pages. */
    const authorizeError = async (params: Record<string, string | undefined>) => {
      const res = await new Agent(server.url).get(authorizeUrl({ client_id: app.client_id, redirect_uri: CALLBACK, state: "s1", scope: "locations:read", ...params }))
      expect(res.status).toBe(302)
      const location = new URL(res.location!)
      expect(location.origin + location.pathname).toBe(CALLBACK)
      expect(location.searchParams.get("code")).toBeNull()
      expect(location.searchParams.get("state")).toBe("s1")
      expect(location.searchParams.get("iss")).toBe(server.url)
      return location.searchParams.get("error")
    }

    describe("before the member acts (issue 28, item 5)", () => {
      it("an unverified app's failing authorize request is shown on the error page, never redirected; once verified it goes back", async () => {
        const anyones = await registerApp(server, g.live, { name: "Anyone's app", redirect_uris: [WEB_CALLBACK] })
        const { challenge } = await pkce()
        const failing = [
          { response_type: "x", code_challenge: challenge },
          { code_challenge: undefined, code_challenge_method: undefined },
          { scope: "root:all", code_challenge: challenge },
          { state: "s".repeat(1025), code_challenge: challenge }
        ]
        for (const params of failing) {
          const url = authorizeUrl({ client_id: anyones.client_id, redirect_uri: WEB_CALLBACK, state: "s1", scope: "locations:read", ...params })
          const page = await new Agent(server.url).get(url)
          expect(page.status, JSON.stringify(params)).toBe(400)
          expect(page.location).toBeNull()
          expect(page.headers.get("content-type")).toMatch(/^text\/html/)
          expect(page.text).toContain("This authorization cannot continue")
        }
        await verifyApp(server, anyones.client_id)
        const back = await new Agent(server.url).get(
          authorizeUrl({ client_id: anyones.client_id, redirect_uri: WEB_CALLBACK, state: "s1", scope: "locations:read", response_type: "x", code_challenge: challenge })
        )
        expect(back.status).toBe(302)
        expect(new URL(back.location!).searchParams.get("error")).toBe("unsupported_response_type")
        await verifyApp(server, anyones.client_id, false)
        const again = await new Agent(server.url).get(
          authorizeUrl({ client_id: anyones.client_id, redirect_uri: WEB_CALLBACK, state: "s1", scope: "locations:read", response_type: "x", code_challenge: challenge })
        )
        expect(again.status).toBe(400)
      })

      const metadataWithHost = (host: string) =>
        new Promise<{ status: number; cacheControl: string | undefined; issuer: string }>((resolve, reject) => {
          const { port } = new URL(server.url)
          http.get({ host: "127.0.0.1", port, path: "/.well-known/oauth-authorization-server", headers: { host } }, (res) => {
            let text = ""
            res.on("data", (chunk) => (text += chunk))
            res.on("end", () =>
              resolve({ status: res.statusCode!, cacheControl: res.headers["cache-control"], issuer: JSON.parse(text).issuer })
            )
          }).on("error", reject)
        })

      it("the issuer never follows an untrusted Host, and metadata read from a request is not publicly cacheable", async () => {
        const { port } = new URL(server.url)
        const evil = await metadataWithHost("evil.example")
        expect(evil.status).toBe(200)
        expect(evil.issuer).toBe("http://localhost")
        expect(evil.cacheControl).toBe("no-store")
        const evilPort = await metadataWithHost(`evil.example:${port}`)
        expect(evilPort.issuer).toBe(`http://localhost:${port}`)
        const loopback = await metadataWithHost(`127.0.0.1:${port}`)
        expect(loopback.issuer).toBe(`http://127.0.0.1:${port}`)
        expect(loopback.cacheControl).toBe("no-store")
      })
    })

    it("a state over 1024 characters is refused, and the error still carries it back exactly (RFC 6749 §4.1.2.1)", async () => {
      const { challenge } = await pkce()
      const long = "x".repeat(1025)
      const res = await new Agent(server.url).get(
        authorizeUrl({ client_id: app.client_id, redirect_uri: CALLBACK, state: long, scope: "locations:read", code_challenge: challenge })
      )
      expect(res.status).toBe(302)
      const location = new URL(res.location!)
      expect([location.searchParams.get("error"), location.searchParams.get("state")]).toEqual(["invalid_request", long])
    })

    describe("PKCE", () => {
      it("refuses an authorize request without a code_challenge", async () => {
        expect(await authorizeError({ code_challenge: undefined, code_challenge_method: undefined })).toBe("invalid_request")
      })

      it("refuses the plain method, and a challenge without a method (which means plain)", async () => {
        const { challenge } = await pkce()
        expect(await authorizeError({ code_challenge: challenge, code_challenge_method: "plain" })).toBe("invalid_request")
        expect(await authorizeError({ code_challenge: challenge, code_challenge_method: undefined })).toBe("invalid_request")
        expect(await authorizeError({ code_challenge: "too-short", code_challenge_method: "S256" })).toBe("invalid_request")
      })

      it("refuses a wrong verifier without burning the code; the right verifier still redeems it", async () => {
        const c = await obtainCode()
        const { verifier: wrong } = await pkce()
        const res = await exchange({ ...c, verifier: wrong })
        expect(res.status).toBe(400)
        expect(res.json.error).toBe("invalid_grant")
        expect((await exchange(c)).status).toBe(200)
      })

      it("refuses a token request without a verifier, and a verifier for a request that had no challenge", async () => {
        const c = await obtainCode()
        const missing = await postForm(server, TOKEN, { grant_type: "authorization_code", code: c.code, redirect_uri: c.redirectUri }, basic(app))
        expect(missing.status).toBe(400)
        expect(missing.json.error).toBe("invalid_request")
        // Without a challenge no code is ever issued, so a verifier has nothing to prove.
        expect(await authorizeError({ code_challenge: undefined, code_challenge_method: undefined })).toBe("invalid_request")
        const { verifier } = await pkce()
        const forged = await postForm(server, TOKEN, { grant_type: "authorization_code", code: "a".repeat(43), code_verifier: verifier, redirect_uri: CALLBACK }, basic(app))
        expect(forged.status).toBe(400)
        expect(forged.json.error).toBe("invalid_grant")
        const malformed = await postForm(server, TOKEN, { grant_type: "authorization_code", code: c.code, code_verifier: "short", redirect_uri: c.redirectUri }, basic(app))
        expect(malformed.json.error).toBe("invalid_request")
      })
    })

    describe("authorization codes", () => {
      it("a replay with the valid verifier is refused and revokes what the code issued", async () => {
        const c = await obtainCode()
        const first = await exchange(c)
        expect(first.status).toBe(200)
        expect((await v1(first.json.access_token)).status).toBe(200)
        const replay = await exchange(c)
        expect(replay.status).toBe(400)
        expect(replay.json.error).toBe("invalid_grant")
        expect((await v1(first.json.access_token)).status).toBe(401)
        expect((await refresh(first.json.refresh_token)).json.error).toBe("invalid_grant")
      })

      it("a replay with a wrong verifier is refused but revokes nothing", async () => {
        const c = await obtainCode()
        const first = await exchange(c)
        const { verifier } = await pkce()
        expect((await exchange({ ...c, verifier })).json.error).toBe("invalid_grant")
        expect((await v1(first.json.access_token)).status).toBe(200)
      })

      it("a code presented by another client is refused and stays usable by its own client", async () => {
        const c = await obtainCode()
        const stolen = await exchange(c, other)
        expect(stolen.status).toBe(400)
        expect(stolen.json.error).toBe("invalid_grant")
        expect((await exchange(c)).status).toBe(200)
      })

      it("a code expires after 60 seconds", async () => {
        const c = await obtainCode()
        time.advance(61_000)
        const res = await exchange(c)
        expect(res.status).toBe(400)
        expect(res.json.error).toBe("invalid_grant")
        expect(res.json.error_description).toMatch(/expired/)
      })

      it("a code is bound to the redirect_uri of its request", async () => {
        const c = await obtainCode(app, { redirectUri: "http://127.0.0.1:9999/callback" })
        expect((await exchange({ ...c, redirectUri: CALLBACK })).json.error).toBe("invalid_grant")
        expect((await exchange(c)).status).toBe(200)
      })
    })

    describe("redirect URIs", () => {
      const variants: Array<[string, string]> = [
        ["trailing slash", `${CALLBACK}/`],
        ["case of the path", "http://127.0.0.1:7777/Callback"],
        ["case of the scheme", "HTTP://127.0.0.1:7777/callback"],
        ["extra query", `${CALLBACK}?next=/admin`],
        ["other port on an https URI", "https://client.example:8443/cb"],
        ["other scheme (http for https)", "http://client.example/cb"],
        ["other scheme (https for loopback http)", "https://127.0.0.1:7777/callback"],
        ["localhost for 127.0.0.1", "http://localhost:7777/callback"],
        ["other host", "https://evil.example/cb"],
        ["a fragment", `${WEB_CALLBACK}#x`]
      ]
      for (const [name, uri] of variants) {
        it(`refuses ${name} with an error page, never a redirect`, async () => {
          const { challenge } = await pkce()
          const res = await new Agent(server.url).get(
            authorizeUrl({ client_id: app.client_id, redirect_uri: uri, scope: "locations:read", code_challenge: challenge, state: "s" })
          )
          expect(res.status).toBe(400)
          expect(res.location).toBeNull()
          expect(res.headers.get("content-type")).toContain("text/html")
          expect(res.text).toContain("redirect_uri")
        })
      }

      it("accepts any port on a registered loopback URI, and the exact https URI", async () => {
        const { challenge } = await pkce()
        for (const uri of ["http://127.0.0.1:51004/callback", WEB_CALLBACK]) {
          const res = await new Agent(server.url).get(
            authorizeUrl({ client_id: app.client_id, redirect_uri: uri, scope: "locations:read", code_challenge: challenge })
          )
          expect(res.status, uri).toBe(303)
          expect(res.location).toMatch(/^\/api\/oauth\/consent\?request=/)
        }
      })

      it("an unknown client_id, a missing redirect_uri or a repeated one is an error page", async () => {
        const { challenge } = await pkce()
        for (
          const path of [
            authorizeUrl({ client_id: "app_unknown", redirect_uri: CALLBACK, scope: "locations:read", code_challenge: challenge }),
            authorizeUrl({ client_id: app.client_id, scope: "locations:read", code_challenge: challenge }),
            `${authorizeUrl({ client_id: app.client_id, redirect_uri: CALLBACK, code_challenge: challenge })}&redirect_uri=${encodeURIComponent(WEB_CALLBACK)}`
          ]
        ) {
          const res = await new Agent(server.url).get(path)
          expect(res.status).toBe(400)
          expect(res.location).toBeNull()
          expect(res.headers.get("x-frame-options")).toBe("DENY")
          expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
        }
      })
    })

    describe("client authentication and grant types", () => {
      it("refuses a wrong secret by Basic with 401 and WWW-Authenticate, and by post with 401", async () => {
        const c = await obtainCode()
        const form = { grant_type: "authorization_code", code: c.code, code_verifier: c.verifier, redirect_uri: c.redirectUri }
        const byBasic = await postForm(server, TOKEN, form, { clientId: app.client_id, secret: other.client_secret! })
        expect(byBasic.status).toBe(401)
        expect(byBasic.json.error).toBe("invalid_client")
        expect(byBasic.headers.get("www-authenticate")).toMatch(/^Basic /)
        expect(byBasic.headers.get("cache-control")).toBe("no-store")
        const byPost = await postForm(server, TOKEN, { ...form, client_id: app.client_id, client_secret: `${app.client_secret}x` })
        expect(byPost.status).toBe(401)
        expect(byPost.json.error).toBe("invalid_client")
        const none = await postForm(server, TOKEN, { ...form, client_id: app.client_id })
        expect(none.status).toBe(401)
        const unknown = await postForm(server, TOKEN, form, { clientId: "app_nobody", secret: app.client_secret! })
        expect(unknown.status).toBe(401)
        const bearer = await fetch(`${server.url}${TOKEN}`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Bearer ${f.tokens.api}` },
          body: new URLSearchParams(form).toString()
        })
        expect(bearer.status).toBe(401)
        // None of those consumed the code.
        expect((await exchange(c)).status).toBe(200)
      })

      it("refuses two authentication methods in one request", async () => {
        const c = await obtainCode()
        const form = { grant_type: "authorization_code", code: c.code, code_verifier: c.verifier, redirect_uri: c.redirectUri }
        const doubled = await postForm(server, TOKEN, { ...form, client_secret: app.client_secret! }, basic(app))
        expect(doubled.status).toBe(400)
        expect(doubled.json.error).toBe("invalid_request")
        const mismatched = await postForm(server, TOKEN, { ...form, client_id: other.client_id }, basic(app))
        expect(mismatched.status).toBe(400)
        expect(mismatched.json.error).toBe("invalid_request")
      })

      it("a public client sending a secret is refused", async () => {
        const pub = await registerApp(server, f.live, { type: "public", grant_types: ["authorization_code"] })
        const res = await postForm(server, TOKEN, { grant_type: "authorization_code", client_id: pub.client_id, client_secret: "svc_cs_guess" })
        expect(res.status).toBe(401)
        expect(res.json.error).toBe("invalid_client")
      })

      it("refuses unsupported and missing grant types, JSON bodies and repeated parameters", async () => {
        for (const grant of ["password", "implicit", "urn:ietf:params:oauth:grant-type:device_code"]) {
          const res = await postForm(server, TOKEN, { grant_type: grant }, basic(app))
          expect(res.status).toBe(400)
          expect(res.json.error).toBe("unsupported_grant_type")
        }
        expect((await postForm(server, TOKEN, {}, basic(app))).json.error).toBe("invalid_request")
        const json = await fetch(`${server.url}${TOKEN}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ grant_type: "client_credentials", client_id: app.client_id, client_secret: app.client_secret })
        })
        expect(json.status).toBe(400)
        expect((await json.json()).error).toBe("invalid_request")
        const repeated = await fetch(`${server.url}${TOKEN}`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: `grant_type=client_credentials&grant_type=client_credentials&client_id=${app.client_id}&client_secret=${app.client_secret}`
        })
        expect(repeated.status).toBe(400)
        expect((await repeated.json()).error).toBe("invalid_request")
        const get = await fetch(`${server.url}${TOKEN}`)
        expect(get.status).toBe(405)
      })

      it("every token response, success or error, is marked no-store", async () => {
        const ok = await exchange(await obtainCode())
        for (const res of [ok, await postForm(server, TOKEN, { grant_type: "password" }, basic(app))]) {
          expect(res.headers.get("cache-control")).toBe("no-store")
          expect(res.headers.get("pragma")).toBe("no-cache")
          expect(res.headers.get("content-type")).toContain("application/json")
        }
        expect(ok.json).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "locations:read" })
        // A public app in a browser reads the answer across origins.
        expect(ok.headers.get("access-control-allow-origin")).toBe("*")
      })

      it("an app that lost the authorization_code grant cannot redeem a code it got before", async () => {
        const changing = await registerApp(server, f.live, { redirect_uris: [CALLBACK] })
        const c = await obtainCode(changing)
        const patched = await call(server, "PATCH", `/v1/apps/${changing.id}`, {
          token: f.tokens.api,
          body: { grant_types: ["client_credentials"], redirect_uris: [] }
        })
        expect(patched.status).toBe(200)
        const res = await exchange(c, changing)
        expect(res.status).toBe(400)
        expect(res.json.error).toBe("unauthorized_client")
      })
    })

    describe("scopes", () => {
      it("refuses scopes the app may not ask for, and unknown scopes, at authorize", async () => {
        const { challenge } = await pkce()
        expect(await authorizeError({ scope: "locations:read apps:write", code_challenge: challenge })).toBe("invalid_scope")
        expect(await authorizeError({ scope: "locations:read root:all", code_challenge: challenge })).toBe("invalid_scope")
        expect(await authorizeError({ scope: undefined, code_challenge: challenge })).toBe("invalid_scope")
        expect(await authorizeError({ response_type: "token", code_challenge: challenge })).toBe("unsupported_response_type")
      })

      it("refuses a refresh that asks for more than the grant, without consuming the token", async () => {
        const t = await tokens({ scope: "locations:read" })
        const wider = await refresh(t.refresh_token, { scope: "locations:read locations:write" })
        expect(wider.status).toBe(400)
        expect(wider.json.error).toBe("invalid_scope")
        const ok = await refresh(t.refresh_token)
        expect(ok.status).toBe(200)
        expect(ok.json.scope).toBe("locations:read")
      })
    })

    describe("refresh tokens", () => {
      it("a reuse after rotation kills the whole chain", async () => {
        const first = await tokens()
        const second = await refresh(first.refresh_token)
        expect(second.status).toBe(200)
        const reuse = await refresh(first.refresh_token)
        expect(reuse.status).toBe(400)
        expect(reuse.json.error).toBe("invalid_grant")
        expect((await refresh(second.json.refresh_token)).json.error).toBe("invalid_grant")
        expect((await v1(second.json.access_token)).status).toBe(401)
        expect((await v1(first.access_token)).status).toBe(401)
      })

      it("20 parallel refreshes with one token: exactly one succeeds", async () => {
        const t = await tokens()
        const results = await Promise.all(Array.from({ length: 20 }, () => refresh(t.refresh_token)))
        const statuses = results.map((r) => r.status)
        expect(statuses.filter((s) => s === 200)).toHaveLength(1)
        expect(statuses.filter((s) => s === 400)).toHaveLength(19)
        for (const r of results.filter((x) => x.status === 400)) expect(r.json.error).toBe("invalid_grant")
        // The losers presented a used token: that is a reuse, so the winner's pair dies with the chain.
        const winner = results.find((r) => r.status === 200)!.json
        expect((await refresh(winner.refresh_token)).json.error).toBe("invalid_grant")
        expect((await v1(winner.access_token)).status).toBe(401)
      })

      it("an access token sent as a refresh token, and a refresh token sent as a bearer, are refused", async () => {
        const t = await tokens()
        const asRefresh = await refresh(t.access_token)
        expect(asRefresh.status).toBe(400)
        expect(asRefresh.json.error).toBe("invalid_grant")
        expect((await v1(t.refresh_token)).status).toBe(401)
        // Neither attempt disturbed the real pair.
        expect((await v1(t.access_token)).status).toBe(200)
        expect((await refresh(t.refresh_token)).status).toBe(200)
      })

      it("a refresh token of another client is refused", async () => {
        const t = await tokens()
        expect((await refresh(t.refresh_token, {}, other)).json.error).toBe("invalid_grant")
        expect((await refresh(t.refresh_token)).status).toBe(200)
      })

      it("an access token expires after 3600 s; a refresh token after 30 idle days", async () => {
        const t = await tokens()
        time.advance(3_599_000)
        expect((await v1(t.access_token)).status).toBe(200)
        time.advance(2_000)
        expect((await v1(t.access_token)).status).toBe(401)
        const next = await refresh(t.refresh_token)
        expect(next.status).toBe(200)
        time.advance(30 * 24 * 3600 * 1000 + 1000)
        const stale = await refresh(next.json.refresh_token)
        expect(stale.status).toBe(400)
        expect(stale.json.error_description).toMatch(/expired/)
      })
    })

    describe("tenancy", () => {
      it("a token of one organization or environment sees nothing of another", async () => {
        const t = await tokens({ scope: "locations:read" })
        const theirs = await call(server, "POST", "/v1/locations", { token: g.tokens.api, body: { name: "Theirs" } })
        const sandbox = await call(server, "POST", "/v1/locations", { token: f.tokens.sandbox, body: { name: "Sandbox" } })
        const mine = await call(server, "POST", "/v1/locations", { token: f.tokens.api, body: { name: "Mine" } })
        expect((await v1(t.access_token, `/v1/locations/${theirs.json.data.id}`)).status).toBe(404)
        expect((await v1(t.access_token, `/v1/locations/${sandbox.json.data.id}`)).status).toBe(404)
        expect((await v1(t.access_token, `/v1/locations/${mine.json.data.id}`)).status).toBe(200)
        const listed = (await v1(t.access_token)).json.data.map((l: any) => l.id)
        expect(listed).toContain(mine.json.data.id)
        expect(listed).not.toContain(theirs.json.data.id)
        expect(listed).not.toContain(sandbox.json.data.id)
      })

      it("a member cannot grant an organization they do not belong to", async () => {
        const { challenge } = await pkce()
        const agent = new Agent(server.url)
        const start = await agent.get(authorizeUrl({ client_id: app.client_id, redirect_uri: CALLBACK, scope: "locations:read", code_challenge: challenge }))
        const signIn = await agent.get(start.location!)
        const request = hiddenField(signIn.text, "request")
        const signedIn = await agent.post("/api/oauth/sign-in", {
          request,
          csrf: hiddenField(signIn.text, "csrf"),
          email: memberEmail(f),
          password: MEMBER_PASSWORD
        })
        const consent = await agent.get(signedIn.location!)
        expect(consent.text).toContain(f.organizationId)
        expect(consent.text).not.toContain(g.organizationId)
        const res = await agent.post("/api/oauth/consent", {
          request,
          csrf: hiddenField(consent.text, "csrf"),
          decision: "approve",
          organization_id: g.organizationId,
          environment: "live"
        })
        expect(res.status).toBe(400)
        expect(res.location).toBeNull()
        expect(res.text).toContain("member of")
        const again = await agent.get(signedIn.location!)
        const garbage = await agent.post("/api/oauth/consent", {
          request,
          csrf: hiddenField(again.text, "csrf"),
          decision: "approve",
          organization_id: "not-an-id'--",
          environment: "live"
        })
        expect(garbage.status).toBe(400)
        expect(garbage.text).toContain("member of")
      })
    })

    describe("the consent pages", () => {
      it("refuses a wrong password without saying which part was wrong, and a request from another browser", async () => {
        const { challenge } = await pkce()
        const agent = new Agent(server.url)
        const start = await agent.get(authorizeUrl({ client_id: app.client_id, redirect_uri: CALLBACK, scope: "locations:read", code_challenge: challenge }))
        const page = await agent.get(start.location!)
        const wrong = await agent.post("/api/oauth/sign-in", {
          request: hiddenField(page.text, "request"),
          csrf: hiddenField(page.text, "csrf"),
          email: memberEmail(f),
          password: "not the password"
        })
        expect(wrong.status).toBe(401)
        expect(wrong.text).toContain("email or password is not correct")
        const stranger = new Agent(server.url)
        const elsewhere = await stranger.get(start.location!)
        expect(elsewhere.status).toBe(403)
        expect(elsewhere.text).not.toContain("csrf")
      })

      it("throttles sign-in per account: the eleventh attempt in the window is 429 even with the right password", async () => {
        const member = await seedFixture(server, "Throttled org")
        const bystander = await seedFixture(server, "Bystander org")
        const signInPage = async (agent: Agent) => {
          const { challenge } = await pkce()
          const start = await agent.get(authorizeUrl({ client_id: app.client_id, redirect_uri: CALLBACK, scope: "locations:read", code_challenge: challenge }))
          const page = await agent.get(start.location!)
          return { request: hiddenField(page.text, "request"), csrf: hiddenField(page.text, "csrf") }
        }
        const agent = new Agent(server.url)
        const form = await signInPage(agent)
        for (let i = 0; i < 10; i++) {
          const wrong = await agent.post("/api/oauth/sign-in", { ...form, email: memberEmail(member), password: `guess ${i}` })
          expect(wrong.status).toBe(401)
        }
        // The same account in another letter case, with the right password: still refused, before any check of it.
        const blocked = await agent.post("/api/oauth/sign-in", { ...form, email: memberEmail(member).toUpperCase(), password: MEMBER_PASSWORD })
        expect(blocked.status).toBe(429)
        expect(blocked.location).toBeNull()
        const retryAfter = Number(blocked.headers.get("retry-after"))
        expect(retryAfter).toBeGreaterThanOrEqual(1)
        expect(retryAfter).toBeLessThanOrEqual(15 * 60)
        expect(blocked.text).toContain("Too many sign-in attempts")
        // Another account is not held back by it.
        const other = new Agent(server.url)
        const otherForm = await signInPage(other)
        const elsewhere = await other.post("/api/oauth/sign-in", { ...otherForm, email: memberEmail(bystander), password: MEMBER_PASSWORD })
        expect(elsewhere.status).toBe(303)
        // Once the window has turned, the member signs in.
        time.advance(retryAfter * 1000)
        const later = new Agent(server.url)
        const laterForm = await signInPage(later)
        const signedIn = await later.post("/api/oauth/sign-in", { ...laterForm, email: memberEmail(member), password: MEMBER_PASSWORD })
        expect(signedIn.status).toBe(303)
      })

      it("refuses a tampered or missing CSRF token", async () => {
        const { challenge } = await pkce()
        const agent = new Agent(server.url)
        const start = await agent.get(authorizeUrl({ client_id: app.client_id, redirect_uri: CALLBACK, scope: "locations:read", code_challenge: challenge }))
        const page = await agent.get(start.location!)
        const request = hiddenField(page.text, "request")
        const csrf = hiddenField(page.text, "csrf")
        const tampered = `${csrf.slice(0, -1)}${csrf.endsWith("A") ? "B" : "A"}`
        for (const token of [tampered, ""]) {
          const res = await agent.post("/api/oauth/sign-in", { request, csrf: token, email: memberEmail(f), password: MEMBER_PASSWORD })
          expect(res.status).toBe(403)
          expect(res.location).toBeNull()
        }
        const deny = await agent.post("/api/oauth/consent", { request, csrf: tampered, decision: "deny" })
        expect(deny.status).toBe(403)
      })

      it("deny sends access_denied with the same state; the request cannot be answered twice", async () => {
        const { challenge } = await pkce()
        const agent = new Agent(server.url)
        const start = await agent.get(authorizeUrl({ client_id: app.client_id, redirect_uri: CALLBACK, scope: "locations:read", code_challenge: challenge, state: "keep-me" }))
        const page = await agent.get(start.location!)
        const request = hiddenField(page.text, "request")
        const res = await agent.post("/api/oauth/consent", { request, csrf: hiddenField(page.text, "csrf"), decision: "deny" })
        expect(res.status).toBe(303)
        const location = new URL(res.location!)
        expect(location.searchParams.get("error")).toBe("access_denied")
        expect(location.searchParams.get("state")).toBe("keep-me")
        expect(location.searchParams.get("code")).toBeNull()
        const again = await agent.get(`/api/oauth/consent?request=${encodeURIComponent(request)}`)
        expect(again.status).toBe(400)
      })
    })

    describe("client_credentials", () => {
      const cc = (client: OAuthModel.OAuthAppWithSecret, extra: Record<string, string> = {}) =>
        postForm(server, TOKEN, { grant_type: "client_credentials", ...extra }, basic(client))

      it("is for confidential apps with the grant, installed somewhere", async () => {
        const pub = await registerApp(server, f.live, { type: "public", grant_types: ["authorization_code"] })
        const publicTry = await postForm(server, TOKEN, { grant_type: "client_credentials", client_id: pub.client_id })
        expect(publicTry.json.error).toBe("unauthorized_client")
        const noGrant = await registerApp(server, f.live, { grant_types: ["authorization_code"] })
        await install(server, f.live, noGrant.client_id, ["locations:read"])
        expect((await cc(noGrant)).json.error).toBe("unauthorized_client")
        const lonely = await registerApp(server, f.live)
        const notInstalled = await cc(lonely)
        expect(notInstalled.status).toBe(400)
        expect(notInstalled.json.error).toBe("invalid_request")
      })

      it("reaches only installed organizations and installed scopes, never a refresh token", async () => {
        const backend = await registerApp(server, f.live)
        await install(server, g.sandbox, backend.client_id, ["locations:read"])
        const res = await cc(backend)
        expect(res.status).toBe(200)
        expect(res.json.refresh_token).toBeUndefined()
        expect(res.json.scope).toBe("locations:read")
        const beyond = await cc(backend, { scope: "locations:read expenses:read" })
        expect(beyond.json.error).toBe("invalid_scope")
        const elsewhere = await cc(backend, { organization_id: f.organizationId, environment: "live" })
        expect(elsewhere.json.error).toBe("invalid_request")
        const theirs = await call(server, "POST", "/v1/locations", { token: g.tokens.sandbox, body: { name: "G sandbox" } })
        expect((await v1(res.json.access_token, `/v1/locations/${theirs.json.data.id}`)).status).toBe(200)
      })

      it("chooses the installation by organization_id and environment when there are several", async () => {
        const backend = await registerApp(server, f.live)
        await install(server, f.live, backend.client_id, ["locations:read"])
        await install(server, g.live, backend.client_id, ["expenses:read"])
        const ambiguous = await cc(backend)
        expect(ambiguous.json.error).toBe("invalid_request")
        expect(ambiguous.json.error_description).toMatch(/organization_id/)
        const forG = await cc(backend, { organization_id: g.organizationId, environment: "live" })
        expect(forG.status).toBe(200)
        expect(forG.json.scope).toBe("expenses:read")
        const forF = await cc(backend, { organization_id: f.organizationId })
        expect(forF.json.scope).toBe("locations:read")
        expect((await cc(backend, { environment: "staging" })).json.error).toBe("invalid_request")
      })

      it("uninstalling revokes the installation's tokens and the members' grants there", async () => {
        const backend = await registerApp(server, f.live, { redirect_uris: [CALLBACK] })
        const installed = await install(server, f.live, backend.client_id, ["locations:read"])
        const machine = (await cc(backend)).json.access_token
        const member = (await exchange(await obtainCode(backend), backend)).json
        expect((await v1(machine)).status).toBe(200)
        expect((await v1(member.access_token)).status).toBe(200)
        const removed = await call(server, "DELETE", `/v1/app-installations/${installed.id}`, { token: f.tokens.api })
        expect(removed.status).toBe(200)
        expect((await v1(machine)).status).toBe(401)
        expect((await v1(member.access_token)).status).toBe(401)
        expect((await refresh(member.refresh_token, {}, backend)).json.error).toBe("invalid_grant")
        expect((await cc(backend)).json.error).toBe("invalid_request")
      })
    })

    describe("revocation and introspection", () => {
      it("revoking another client's token is refused; an unknown token is a quiet 200", async () => {
        const t = await tokens()
        const foreign = await postForm(server, "/api/oauth/revoke", { token: t.refresh_token }, basic(other))
        expect(foreign.status).toBe(400)
        expect((await v1(t.access_token)).status).toBe(200)
        const unknown = await postForm(server, "/api/oauth/revoke", { token: "svc_rt_nothing" }, basic(app))
        expect(unknown.status).toBe(200)
        const access = await postForm(server, "/api/oauth/revoke", { token: t.access_token, token_type_hint: "access_token" }, basic(app))
        expect(access.status).toBe(200)
        expect((await v1(t.access_token)).status).toBe(401)
      })

      it("introspection answers inactive for other clients' tokens and refuses public clients", async () => {
        const t = await tokens()
        const foreign = await postForm(server, "/api/oauth/introspect", { token: t.access_token }, basic(other))
        expect(foreign.json).toEqual({ active: false })
        const pub = await registerApp(server, f.live, { type: "public", grant_types: ["authorization_code"] })
        const res = await postForm(server, "/api/oauth/introspect", { token: t.access_token, client_id: pub.client_id })
        expect(res.status).toBe(401)
        expect(res.json.error).toBe("invalid_client")
      })
    })
  })
}
