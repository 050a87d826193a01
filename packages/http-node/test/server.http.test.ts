import { Validator } from "@seriousme/openapi-schema-validator"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Credentials } from "@opsplatform/core"
import type { Fixture } from "@opsplatform/testing"
import { testDatabases } from "./support/databases.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"

const db = testDatabases()[0]!

describe(`server (${db.name})`, () => {
  let server: TestServer
  let f: Fixture
  beforeAll(async () => {
    server = await startTestServer(db.choice())
    f = await seedFixture(server)
  })
  afterAll(() => server.close())

  it("publishes an OpenAPI 3.1 document that passes a standard validator", async () => {
    const res = await call(server, "GET", "/v1/openapi.json")
    expect(res.status).toBe(200)
    const doc = res.json
    expect(doc.openapi).toBe("3.1.0")
    const validator = new Validator()
    const result = await validator.validate(doc)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(doc.components.securitySchemes.bearer.type).toBe("http")
    expect(doc.components.securitySchemes.bearer.scheme.toLowerCase()).toBe("bearer")
    const operations = Object.values<any>(doc.paths).flatMap((item) => Object.values<any>(item))
    expect(operations.length).toBeGreaterThan(5)
    for (const op of operations) {
      // Every operation names its scope in its security requirement and documents its errors.
      expect(op.security).toEqual([{ bearer: [op["x-required-scope"]] }])
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["400", "401", "403"]))
    }
    const getLocation = doc.paths["/v1/locations/{id}"].get
    expect(Object.keys(getLocation.responses)).toContain("404")
  })

  it("serves a docs page", async () => {
    const res = await fetch(`${server.url}/docs`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toContain("text/html")
    const html = await res.text()
    expect(html).toContain("Operations Platform API")
    expect(html).toContain("swagger")
  })

  it("answers health and readiness without credentials", async () => {
    expect((await call(server, "GET", "/healthz")).json).toEqual({ data: { status: "ok" }, error: null })
    const ready = await call(server, "GET", "/readyz")
    expect(ready.status).toBe(200)
    expect(ready.json.data.database).toBe("ok")
  })

  it("stamps a distinct X-Request-Id on every response, success or failure", async () => {
    const a = await call(server, "GET", "/v1/locations", { token: f.tokens.api })
    const b = await call(server, "GET", "/v1/locations", { token: f.tokens.api })
    const c = await call(server, "GET", "/nowhere")
    const ids = [a, b, c].map((r) => r.headers.get("x-request-id"))
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{24}$/)
    expect(new Set(ids).size).toBe(3)
    expect(c.json.error.requestId).toBe(ids[2])
  })

  it("accepts every credential kind holding the scope, and each sees only its own environment", async () => {
    const made = await call(server, "POST", "/v1/locations", { token: f.tokens.personal, body: { name: "By a person" } })
    expect(made.status).toBe(201)
    const sandboxList = await call(server, "GET", "/v1/locations", { token: f.tokens.sandbox })
    expect(sandboxList.json.data.map((l: any) => l.id)).not.toContain(made.json.data.id)
    const device = await call(server, "GET", "/v1/locations", { token: f.tokens.device })
    expect(device.status).toBe(403)
  })

  it("answers 401 to a revoked key on its next request", async () => {
    const issued = await server.run(Effect.gen(function*() {
      const credentials = yield* Credentials.Credentials
      return yield* credentials.issue(f.live, { kind: "api_key", scopes: ["locations:read"] })
    }))
    expect((await call(server, "GET", "/v1/locations", { token: issued.token })).status).toBe(200)
    await server.run(Effect.flatMap(Credentials.Credentials, (c) => c.revoke(f.live, issued.credential.id)))
    const after = await call(server, "GET", "/v1/locations", { token: issued.token })
    expect(after.status).toBe(401)
    expect(after.headers.get("www-authenticate")).toContain(`error="invalid_token"`)
  })

  it("pages locations by cursor and by page number alike", async () => {
    const g = await seedFixture(server)
    const ids: Array<string> = []
    for (let i = 0; i < 5; i++) {
      ids.push((await call(server, "POST", "/v1/locations", { token: g.tokens.api, body: { name: `L${i}` } })).json.data.id)
    }
    const first = await call(server, "GET", "/v1/locations?perPage=2", { token: g.tokens.api })
    expect(first.json.meta).toMatchObject({ page: 1, perPage: 2, total: 5, totalPages: 3 })
    const second = await call(server, "GET", `/v1/locations?perPage=2&cursor=${first.json.meta.nextCursor}`, { token: g.tokens.api })
    const byPage = await call(server, "GET", "/v1/locations?perPage=2&page=2", { token: g.tokens.api })
    expect(second.json.data).toEqual(byPage.json.data)
    expect(second.json.meta.page).toBe(2)
    const both = await call(server, "GET", `/v1/locations?page=2&cursor=${first.json.meta.nextCursor}`, { token: g.tokens.api })
    expect(both.status).toBe(400)
    expect(both.json.error.details[0].field).toBe("cursor")
  })
})

describe(`Idempotency-Key (${db.name})`, () => {
  let server: TestServer
  let f: Fixture
  beforeAll(async () => {
    server = await startTestServer(db.choice())
    f = await seedFixture(server)
  })
  afterAll(() => server.close())

  it("runs a POST once per key and replays its response to a retry", async () => {
    const send = (key: string, body: unknown, token = f.tokens.api) =>
      call(server, "POST", "/v1/locations", { token, body, headers: { "idempotency-key": key } })
    const first = await send("create-depot-1", { name: "Depot" })
    expect(first.status).toBe(201)
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    const retry = await send("create-depot-1", { name: "Depot" })
    expect(retry.status).toBe(201)
    expect(retry.headers.get("idempotent-replayed")).toBe("true")
    expect(retry.json).toEqual(first.json)
    const list = await call(server, "GET", "/v1/locations?perPage=100", { token: f.tokens.api })
    expect(list.json.data.filter((l: any) => l.name === "Depot")).toHaveLength(1)

    const misuse = await send("create-depot-1", { name: "Another" })
    expect(misuse.status).toBe(409)
    expect(misuse.json.error.code).toBe("conflict")

    // Another credential's key of the same name is its own.
    const other = await send("create-depot-1", { name: "Depot" }, f.tokens.personal)
    expect(other.status).toBe(201)
    expect(other.headers.get("idempotent-replayed")).toBeNull()
  })

  it("does not remember a failed request, so it can be retried with the same key", async () => {
    const bad = await call(server, "POST", "/v1/locations", {
      token: f.tokens.api,
      body: { name: "Half", latitude: 1 },
      headers: { "idempotency-key": "retry-me" }
    })
    expect(bad.status).toBe(400)
    const fixed = await call(server, "POST", "/v1/locations", {
      token: f.tokens.api,
      body: { name: "Half", latitude: 1, longitude: 2 },
      headers: { "idempotency-key": "retry-me" }
    })
    expect(fixed.status).toBe(201)
  })

  it("refuses an over-long key", async () => {
    const res = await call(server, "POST", "/v1/locations", {
      token: f.tokens.api,
      body: { name: "x" },
      headers: { "idempotency-key": "k".repeat(256) }
    })
    expect(res.status).toBe(400)
    expect(res.json.error.details[0].field).toBe("Idempotency-Key")
  })
})
