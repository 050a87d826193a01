import * as oauth from "oauth4webapi"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Fixture } from "@opsplatform/testing"
import { testDatabases } from "../support/databases.ts"
import { call, seedFixture, startTestServer, type TestServer } from "../support/server.ts"
import { Agent, consentThroughPages, MEMBER_PASSWORD, memberEmail, registerApp } from "./support.ts"

/** The authorization-code + PKCE + refresh flow, driven by a real OAuth client library (oauth4webapi). */
for (const db of testDatabases()) {
  describe(`OAuth flow with oauth4webapi (${db.name})`, () => {
    let server: TestServer
    let f: Fixture
    let as: oauth.AuthorizationServer
    const insecure = { [oauth.allowInsecureRequests]: true }
    const redirectUri = "http://127.0.0.1:7777/callback"

    beforeAll(async () => {
      server = await startTestServer(db.choice())
      f = await seedFixture(server, "Flow org")
      const issuer = new URL(server.url)
      as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure }))
    })
    afterAll(() => server.close())

    it("publishes RFC 8414 metadata with S256 only and every endpoint under the issuer", () => {
      expect(as.issuer).toBe(server.url)
      expect(as.code_challenge_methods_supported).toEqual(["S256"])
      expect(as.authorization_endpoint).toBe(`${server.url}/api/oauth/authorize`)
      expect(as.token_endpoint).toBe(`${server.url}/api/oauth/token`)
      expect(as.revocation_endpoint).toBe(`${server.url}/api/oauth/revoke`)
      expect(as.introspection_endpoint).toBe(`${server.url}/api/oauth/introspect`)
      expect(as.grant_types_supported).toEqual(["authorization_code", "refresh_token", "client_credentials"])
      expect(as.token_endpoint_auth_methods_supported).toEqual(["client_secret_basic", "client_secret_post", "none"])
      expect(as.scopes_supported).toContain("apps:write")
    })

    const authorize = async (client: oauth.Client, scope: string, environment: "live" | "sandbox" = "live") => {
      const verifier = oauth.generateRandomCodeVerifier()
      const state = oauth.generateRandomState()
      const url = new URL(as.authorization_endpoint!)
      url.searchParams.set("client_id", client.client_id)
      url.searchParams.set("redirect_uri", redirectUri)
      url.searchParams.set("response_type", "code")
      url.searchParams.set("scope", scope)
      url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier))
      url.searchParams.set("code_challenge_method", "S256")
      url.searchParams.set("state", state)
      const callback = await consentThroughPages(new Agent(server.url), url.pathname + url.search, {
        email: memberEmail(f),
        password: MEMBER_PASSWORD,
        organizationId: f.organizationId,
        environment
      })
      expect(callback.origin + callback.pathname).toBe(redirectUri)
      return { params: oauth.validateAuthResponse(as, client, callback, state), verifier }
    }

    it("a confidential client: code with PKCE, tokens, /v1 access, refresh rotation, introspection, revocation", async () => {
      const app = await registerApp(server, f.live, { name: "Flow app" })
      const client: oauth.Client = { client_id: app.client_id }
      const auth = oauth.ClientSecretBasic(app.client_secret!)
      const { params, verifier } = await authorize(client, "locations:read locations:write")

      const tokens = await oauth.processAuthorizationCodeResponse(
        as,
        client,
        await oauth.authorizationCodeGrantRequest(as, client, auth, params, redirectUri, verifier, insecure)
      )
      expect(tokens.access_token).toMatch(/^svc_at_/)
      expect(tokens.refresh_token).toMatch(/^svc_rt_/)
      expect(tokens.token_type).toBe("bearer")
      expect(tokens.expires_in).toBe(3600)
      expect(tokens.scope).toBe("locations:read locations:write")

      // The access token works against /v1 exactly like an API key, in the chosen organization environment.
      const created = await call(server, "POST", "/v1/locations", { token: tokens.access_token, body: { name: "Via OAuth" } })
      expect(created.status).toBe(201)
      const listed = await call(server, "GET", "/v1/locations", { token: tokens.access_token })
      expect(listed.json.data.map((l: any) => l.id)).toContain(created.json.data.id)
      const notGranted = await call(server, "GET", "/v1/expenses", { token: tokens.access_token })
      expect(notGranted.status).toBe(403)

      // Refresh: a new pair; a narrower scope narrows the access token only.
      const refreshed = await oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, {
          ...insecure,
          additionalParameters: { scope: "locations:read" }
        })
      )
      expect(refreshed.refresh_token).toMatch(/^svc_rt_/)
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)
      expect(refreshed.scope).toBe("locations:read")
      expect((await call(server, "GET", "/v1/locations", { token: refreshed.access_token })).status).toBe(200)
      expect((await call(server, "POST", "/v1/locations", { token: refreshed.access_token, body: { name: "x" } })).status).toBe(403)
      const again = await oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, auth, refreshed.refresh_token!, insecure)
      )
      expect(again.scope).toBe("locations:read locations:write")

      const introspected = await oauth.processIntrospectionResponse(
        as,
        client,
        await oauth.introspectionRequest(as, client, auth, again.access_token, insecure)
      )
      expect(introspected).toMatchObject({
        active: true,
        client_id: app.client_id,
        scope: "locations:read locations:write",
        token_type: "Bearer",
        sub: f.userId,
        iss: server.url,
        organization_id: f.organizationId,
        environment: "live"
      })

      // Revoking the refresh token revokes the grant: its access tokens stop working.
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, again.refresh_token!, insecure))
      expect((await call(server, "GET", "/v1/locations", { token: again.access_token })).status).toBe(401)
      expect((await call(server, "GET", "/v1/locations", { token: tokens.access_token })).status).toBe(401)
      const dead = await oauth.processIntrospectionResponse(
        as,
        client,
        await oauth.introspectionRequest(as, client, auth, again.refresh_token!, insecure)
      )
      expect(dead.active).toBe(false)
    })

    it("a public client authenticates with its client_id alone and gets the sandbox it chose", async () => {
      const app = await registerApp(server, f.live, {
        name: "Native app",
        type: "public",
        grant_types: ["authorization_code", "refresh_token"],
        redirect_uris: ["http://127.0.0.1/callback"]
      })
      expect(app.client_secret).toBeNull()
      const client: oauth.Client = { client_id: app.client_id, token_endpoint_auth_method: "none" }
      const { params, verifier } = await authorize(client, "locations:read", "sandbox")
      const tokens = await oauth.processAuthorizationCodeResponse(
        as,
        client,
        await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, insecure)
      )
      expect(tokens.scope).toBe("locations:read")
      const sandboxMade = await call(server, "POST", "/v1/locations", { token: f.tokens.sandbox, body: { name: "Sandbox site" } })
      const seen = await call(server, "GET", "/v1/locations", { token: tokens.access_token })
      expect(seen.status).toBe(200)
      expect(seen.json.data.map((l: any) => l.id)).toContain(sandboxMade.json.data.id)
      const refreshed = await oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure)
      )
      expect(refreshed.access_token).toMatch(/^svc_at_/)
    })

    it("client_credentials with client_secret_post reaches the installation", async () => {
      const app = await registerApp(server, f.live, { name: "Backend app" })
      const other = await seedFixture(server, "Installer")
      await call(server, "POST", "/v1/app-installations", {
        token: other.tokens.sandbox,
        body: { client_id: app.client_id, scopes: ["expenses:read"] }
      })
      const client: oauth.Client = { client_id: app.client_id }
      const tokens = await oauth.processClientCredentialsResponse(
        as,
        client,
        await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretPost(app.client_secret!), {}, insecure)
      )
      expect(tokens.refresh_token).toBeUndefined()
      expect(tokens.scope).toBe("expenses:read")
      expect((await call(server, "GET", "/v1/expenses", { token: tokens.access_token })).status).toBe(200)
      const introspected = await oauth.processIntrospectionResponse(
        as,
        client,
        await oauth.introspectionRequest(as, client, oauth.ClientSecretPost(app.client_secret!), tokens.access_token, insecure)
      )
      expect(introspected).toMatchObject({ active: true, sub: app.client_id, organization_id: other.organizationId, environment: "sandbox" })
    })
  })
}
