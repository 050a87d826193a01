import { createHash } from "node:crypto"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testDatabases } from "../support/databases.ts"
import { call, seedFixture, startTestServer, type TestServer } from "../support/server.ts"
import { Agent, authorizeUrl, hiddenField, install, MEMBER_PASSWORD, memberEmail, pkce, postForm, registerApp } from "./support.ts"

const CALLBACK = "http://127.0.0.1:7777/callback"

/** Every row of every table, as text. */
const dumpDatabase = (server: TestServer) =>
  server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const tables = yield* sql<{ table_name: string }>`SELECT table_name FROM information_schema.tables
      WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`
    const dump: Record<string, string> = {}
    for (const { table_name } of tables) {
      const rows = yield* sql<{ row: string }>`SELECT t::text AS row FROM ${sql(table_name)} t`
      dump[table_name] = rows.map((r) => r.row).join("\n")
    }
    return dump
  }).pipe(Effect.orDie))

for (const db of testDatabases()) {
  describe(`secrets at rest (${db.name})`, () => {
    let server: TestServer
    beforeAll(async () => {
      server = await startTestServer(db.choice())
    })
    afterAll(() => server.close())

    it("after a full flow no table holds a raw token, code, secret, session, handle or password", async () => {
      const f = await seedFixture(server, "Secrets org")
      const app = await registerApp(server, f.live, { redirect_uris: [CALLBACK] })
      const secrets: Record<string, string> = {
        "client secret": app.client_secret!,
        "member password": MEMBER_PASSWORD,
        "API key": f.tokens.api
      }

      // The consent flow, keeping every value the browser ever held.
      const agent = new Agent(server.url)
      const { challenge, verifier } = await pkce()
      secrets["code verifier"] = verifier
      const start = await agent.get(authorizeUrl({ client_id: app.client_id, redirect_uri: CALLBACK, scope: "locations:read", code_challenge: challenge, state: "s" }))
      secrets["anonymous session"] = agent.cookies.get("opsplatform_oauth_session")!
      const signInPage = await agent.get(start.location!)
      const request = hiddenField(signInPage.text, "request")
      secrets["request handle"] = request
      secrets["sign-in CSRF token"] = hiddenField(signInPage.text, "csrf")
      const signedIn = await agent.post("/api/oauth/sign-in", {
        request,
        csrf: secrets["sign-in CSRF token"]!,
        email: memberEmail(f),
        password: MEMBER_PASSWORD
      })
      secrets["signed-in session"] = agent.cookies.get("opsplatform_oauth_session")!
      expect(secrets["signed-in session"]).not.toBe(secrets["anonymous session"])
      const consent = await agent.get(signedIn.location!)
      secrets["consent CSRF token"] = hiddenField(consent.text, "csrf")
      const decided = await agent.post("/api/oauth/consent", {
        request,
        csrf: secrets["consent CSRF token"]!,
        decision: "approve",
        organization_id: f.organizationId,
        environment: "live"
      })
      const code = new URL(decided.location!).searchParams.get("code")!
      secrets["authorization code"] = code

      const basic = { clientId: app.client_id, secret: app.client_secret! }
      const issued = await postForm(server, "/api/oauth/token", { grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: CALLBACK }, basic)
      expect(issued.status).toBe(200)
      secrets["access token"] = issued.json.access_token
      secrets["refresh token"] = issued.json.refresh_token
      const rotated = await postForm(server, "/api/oauth/token", { grant_type: "refresh_token", refresh_token: issued.json.refresh_token }, basic)
      secrets["rotated access token"] = rotated.json.access_token
      secrets["rotated refresh token"] = rotated.json.refresh_token
      await install(server, f.live, app.client_id, ["locations:read"])
      secrets["client_credentials token"] = (await postForm(server, "/api/oauth/token", { grant_type: "client_credentials" }, basic)).json.access_token
      const newSecret = await call(server, "POST", `/v1/apps/${app.id}/rotate-secret`, { token: f.tokens.api })
      secrets["rotated client secret"] = newSecret.json.data.client_secret
      for (const [what, value] of Object.entries(secrets)) expect(value, what).toMatch(/.{20,}/)

      const dump = await dumpDatabase(server)
      const everything = Object.values(dump).join("\n")
      for (const [what, value] of Object.entries(secrets)) {
        // The random part alone as well: a token stored without its prefix is still a raw token.
        const body = value.replace(/^svc_[a-z]+_/, "")
        const found = Object.entries(dump).filter(([, rows]) => rows.includes(value) || rows.includes(body)).map(([t]) => t)
        expect(found, `${what} is stored raw in ${found.join(", ")}`).toEqual([])
      }
      // The scan sees the rows it should: the hashes of what was issued are there.
      const sha256 = (v: string) => createHash("sha256").update(v).digest("hex")
      for (const what of ["access token", "refresh token", "rotated refresh token", "rotated client secret", "signed-in session"]) {
        expect(everything, what).toContain(sha256(secrets[what]!))
      }
      expect(dump.oauth_codes).toContain(sha256(code))
    })
  })
}
