import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Fixture } from "@opsplatform/testing"
import { testDatabases } from "../support/databases.ts"
import { call, seedFixture, startTestServer, type TestServer } from "../support/server.ts"
import { postForm } from "./support.ts"

const valid = {
  name: "Dispatch sync",
  type: "confidential",
  redirect_uris: ["https://dispatch.example/oauth/callback", "http://127.0.0.1/callback", "http://[::1]:8080/cb"],
  scopes: ["locations:read", "expenses:read"],
  grant_types: ["authorization_code", "refresh_token", "client_credentials"]
}

/** App registration and installations through /v1. */
for (const db of testDatabases()) {
  describe(`/v1 apps (${db.name})`, () => {
    let server: TestServer
    let f: Fixture
    let g: Fixture

    beforeAll(async () => {
      server = await startTestServer(db.choice())
      f = await seedFixture(server, "App owner")
      g = await seedFixture(server, "App installer")
    })
    afterAll(() => server.close())

    const register = async (body: Record<string, unknown> = valid, token = f.tokens.api) => {
      const res = await call(server, "POST", "/v1/apps", { token, body })
      expect(res.status, res.text).toBe(201)
      return res.json.data
    }

    const clientCredentials = (clientId: string, secret: string) =>
      postForm(server, "/api/oauth/token", { grant_type: "client_credentials" }, { clientId, secret })

    it("registers a confidential app and shows its secret once", async () => {
      const app = await register()
      expect(app.client_id).toMatch(/^app_[0-9a-f]{32}$/)
      expect(app.client_secret).toMatch(/^svc_cs_[A-Za-z0-9_-]{43}$/)
      expect(app.secret_prefix).toBe(app.client_secret.slice(0, 11))
      expect(app).toMatchObject({ name: "Dispatch sync", type: "confidential", scopes: valid.scopes, grant_types: valid.grant_types })
      const got = await call(server, "GET", `/v1/apps/${app.id}`, { token: f.tokens.api })
      expect(got.status).toBe(200)
      expect(got.json.data.client_secret).toBeUndefined()
      expect(got.text).not.toContain(app.client_secret)
      const listed = await call(server, "GET", "/v1/apps", { token: f.tokens.api })
      expect(listed.json.data.map((a: any) => a.id)).toContain(app.id)
      expect(listed.text).not.toContain(app.client_secret)
    })

    it("a public app has no secret and may not use client_credentials", async () => {
      const app = await register({ ...valid, type: "public", grant_types: ["authorization_code", "refresh_token"] })
      expect(app.client_secret).toBeNull()
      expect(app.secret_prefix).toBeNull()
      const refused = await call(server, "POST", "/v1/apps", { token: f.tokens.api, body: { ...valid, type: "public" } })
      expect(refused.status).toBe(400)
      expect(refused.json.error.details).toContainEqual({
        field: "grant_types",
        issue: "client_credentials needs a confidential app (a public app cannot keep a secret)"
      })
      const rotate = await call(server, "POST", `/v1/apps/${app.id}/rotate-secret`, { token: f.tokens.api })
      expect(rotate.status).toBe(409)
    })

    it("validates redirect URIs, scopes and grant types, one detail per problem", async () => {
      const res = await call(server, "POST", "/v1/apps", {
        token: f.tokens.api,
        body: {
          ...valid,
          redirect_uris: [
            "http://dispatch.example/cb",
            "http://localhost:3000/cb",
            "https://dispatch.example/cb#frag",
            "ftp://dispatch.example/cb",
            "not a url",
            "https://user:pw@dispatch.example/cb"
          ],
          scopes: ["locations:read", "root:all"],
          grant_types: ["refresh_token"]
        }
      })
      expect(res.status).toBe(400)
      expect(res.json.error.code).toBe("validation_failed")
      const fields = res.json.error.details.map((d: any) => d.field)
      expect(fields).toEqual(expect.arrayContaining([
        "redirect_uris.0",
        "redirect_uris.1",
        "redirect_uris.2",
        "redirect_uris.3",
        "redirect_uris.4",
        "redirect_uris.5",
        "scopes",
        "grant_types"
      ]))
      const noUris = await call(server, "POST", "/v1/apps", { token: f.tokens.api, body: { ...valid, redirect_uris: [] } })
      expect(noUris.json.error.details).toContainEqual({ field: "redirect_uris", issue: "authorization_code needs at least one redirect URI" })
      const unknownField = await call(server, "POST", "/v1/apps", { token: f.tokens.api, body: { ...valid, client_secret: "mine" } })
      expect(unknownField.status).toBe(400)
    })

    it("updates an app but never its type; rotation replaces the secret at once", async () => {
      const app = await register()
      const renamed = await call(server, "PATCH", `/v1/apps/${app.id}`, {
        token: f.tokens.api,
        body: { name: "Renamed", scopes: ["locations:read"] }
      })
      expect(renamed.status).toBe(200)
      expect(renamed.json.data).toMatchObject({ name: "Renamed", scopes: ["locations:read"] })
      expect((await call(server, "PATCH", `/v1/apps/${app.id}`, { token: f.tokens.api, body: { type: "public" } })).status).toBe(400)
      await call(server, "POST", "/v1/app-installations", { token: f.tokens.api, body: { client_id: app.client_id, scopes: ["locations:read"] } })
      expect((await clientCredentials(app.client_id, app.client_secret)).status).toBe(200)
      const rotated = await call(server, "POST", `/v1/apps/${app.id}/rotate-secret`, { token: f.tokens.api })
      expect(rotated.status).toBe(200)
      expect(rotated.json.data.client_secret).toMatch(/^svc_cs_/)
      expect(rotated.json.data.client_secret).not.toBe(app.client_secret)
      expect(rotated.json.data.secret_rotated_at).not.toBeNull()
      expect((await clientCredentials(app.client_id, app.client_secret)).status).toBe(401)
      expect((await clientCredentials(app.client_id, rotated.json.data.client_secret)).status).toBe(200)
    })

    it("a retried registration or rotation gets the same client secret back, and the store never holds it in clear", async () => {
      const key = `register-${f.organizationId}`
      const first = await call(server, "POST", "/v1/apps", { token: f.tokens.api, body: valid, headers: { "idempotency-key": key } })
      const retried = await call(server, "POST", "/v1/apps", { token: f.tokens.api, body: valid, headers: { "idempotency-key": key } })
      expect(first.status).toBe(201)
      expect(retried.headers.get("idempotent-replayed")).toBe("true")
      expect(retried.json.data).toEqual(first.json.data)
      const rotateKey = `rotate-${first.json.data.id}`
      const rotated = await call(server, "POST", `/v1/apps/${first.json.data.id}/rotate-secret`, {
        token: f.tokens.api,
        headers: { "idempotency-key": rotateKey }
      })
      const rotatedAgain = await call(server, "POST", `/v1/apps/${first.json.data.id}/rotate-secret`, {
        token: f.tokens.api,
        headers: { "idempotency-key": rotateKey }
      })
      expect(rotatedAgain.headers.get("idempotent-replayed")).toBe("true")
      expect(rotatedAgain.json.data.client_secret).toBe(rotated.json.data.client_secret)
      const remembered = await server.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql`SELECT body FROM idempotency_keys WHERE key IN (${key}, ${rotateKey})`
        return rows.map((r: any) => String(r.body))
      }))
      expect(remembered).toHaveLength(2)
      for (const body of remembered) {
        for (const secret of [first.json.data.client_secret, rotated.json.data.client_secret]) expect(body).not.toContain(secret)
      }
      const app = await register()
      const install = await call(server, "POST", "/v1/app-installations", {
        token: g.tokens.api,
        body: { client_id: app.client_id, scopes: ["locations:read"] },
        headers: { "idempotency-key": "install-1" }
      })
      expect(install.status).toBe(201)
    })

    it("another organization or environment sees none of the app, but may install it", async () => {
      const app = await register()
      for (const token of [g.tokens.api, f.tokens.sandbox]) {
        expect((await call(server, "GET", `/v1/apps/${app.id}`, { token })).status).toBe(404)
        expect((await call(server, "DELETE", `/v1/apps/${app.id}`, { token })).status).toBe(404)
        expect((await call(server, "POST", `/v1/apps/${app.id}/rotate-secret`, { token })).status).toBe(404)
      }
      const installed = await call(server, "POST", "/v1/app-installations", {
        token: g.tokens.api,
        body: { client_id: app.client_id, scopes: ["locations:read", "expenses:read"] }
      })
      expect(installed.status).toBe(201)
      expect(installed.json.data).toMatchObject({ app_id: app.id, client_id: app.client_id, app_name: app.name, environment: "live" })
      const twice = await call(server, "POST", "/v1/app-installations", {
        token: g.tokens.api,
        body: { client_id: app.client_id, scopes: ["locations:read"] }
      })
      expect(twice.status).toBe(409)
      const list = await call(server, "GET", "/v1/app-installations", { token: g.tokens.api })
      expect(list.json.data.map((i: any) => i.id)).toContain(installed.json.data.id)
      expect((await call(server, "GET", "/v1/app-installations", { token: g.tokens.sandbox })).json.data.map((i: any) => i.id))
        .not.toContain(installed.json.data.id)
      expect((await call(server, "GET", `/v1/app-installations/${installed.json.data.id}`, { token: g.tokens.sandbox })).status).toBe(404)
      expect((await call(server, "GET", `/v1/app-installations/${installed.json.data.id}`, { token: f.tokens.api })).status).toBe(404)
    })

    it("an id that is not a UUID is a 400 naming the parameter, never a query the database refuses", async () => {
      for (const [method, path] of [["GET", "/v1/apps/abc"], ["PATCH", "/v1/apps/abc"], ["DELETE", "/v1/apps/x'1"], ["POST", "/v1/apps/abc/rotate-secret"], ["GET", "/v1/app-installations/abc"], ["DELETE", "/v1/app-installations/abc"]] as const) {
        const res = await call(server, method, path, { token: f.tokens.api, ...(method === "PATCH" ? { body: { name: "x" } } : {}) })
        expect(res.status, `${method} ${path}`).toBe(400)
        expect(res.json.error.code).toBe("validation_failed")
      }
    })

    it("an installation's scopes stay within the app's, and the client id must exist", async () => {
      const app = await register()
      const beyond = await call(server, "POST", "/v1/app-installations", {
        token: g.tokens.api,
        body: { client_id: app.client_id, scopes: ["locations:read", "apps:write"] }
      })
      expect(beyond.status).toBe(400)
      expect(beyond.json.error.details).toContainEqual({ field: "scopes", issue: "the app may not ask for apps:write" })
      const none = await call(server, "POST", "/v1/app-installations", { token: g.tokens.api, body: { client_id: app.client_id, scopes: [] } })
      expect(none.status).toBe(400)
      const unknown = await call(server, "POST", "/v1/app-installations", {
        token: g.tokens.api,
        body: { client_id: "app_00000000000000000000000000000000", scopes: ["locations:read"] }
      })
      expect(unknown.status).toBe(404)
    })

    it("deleting an app revokes every token it holds, everywhere", async () => {
      const app = await register()
      await call(server, "POST", "/v1/app-installations", { token: g.tokens.sandbox, body: { client_id: app.client_id, scopes: ["locations:read"] } })
      const token = (await clientCredentials(app.client_id, app.client_secret)).json.access_token
      expect((await call(server, "GET", "/v1/locations", { token })).status).toBe(200)
      const removed = await call(server, "DELETE", `/v1/apps/${app.id}`, { token: f.tokens.api })
      expect(removed.json.data).toEqual({ id: app.id, deleted: true })
      expect((await call(server, "GET", "/v1/locations", { token })).status).toBe(401)
      expect((await clientCredentials(app.client_id, app.client_secret)).status).toBe(401)
      expect((await call(server, "GET", `/v1/apps/${app.id}`, { token: f.tokens.api })).status).toBe(404)
      expect((await call(server, "GET", "/v1/app-installations", { token: g.tokens.sandbox })).json.data).toEqual([])
    })
  })
}
