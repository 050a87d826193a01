import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Expenses, Locations } from "@opsplatform/core"
import type { Fixture } from "@opsplatform/testing"
import { testDatabases } from "./support/databases.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"

for (const db of testDatabases()) {
  describe(`/v1/locations over HTTP (${db.name})`, () => {
    let server: TestServer
    let f: Fixture
    beforeAll(async () => {
      server = await startTestServer(db.choice())
      f = await seedFixture(server)
    })
    afterAll(() => server.close())

    it("creates, reads, lists, updates and deletes a location in the envelope", async () => {
      const created = await call(server, "POST", "/v1/locations", {
        token: f.tokens.api,
        body: { name: "Depot North", code: "DN", vertical_type: "warehouse", latitude: 44.5, longitude: 26.08 }
      })
      expect(created.status).toBe(201)
      expect(created.json.error).toBeNull()
      expect(created.json.data).toMatchObject({ name: "Depot North", code: "DN", is_primary: false, vertical_type: "warehouse" })
      const id = created.json.data.id
      const got = await call(server, "GET", `/v1/locations/${id}`, { token: f.tokens.api })
      expect(got.json).toEqual({ data: created.json.data, error: null })
      const updated = await call(server, "PATCH", `/v1/locations/${id}`, { token: f.tokens.api, body: { is_primary: true } })
      expect(updated.status).toBe(200)
      expect(updated.json.data.is_primary).toBe(true)
      const list = await call(server, "GET", "/v1/locations?perPage=10", { token: f.tokens.api })
      expect(list.json.meta).toEqual({ page: 1, perPage: 10, total: 1, totalPages: 1, nextCursor: null })
      expect(list.json.data.map((l: any) => l.id)).toEqual([id])
      const removed = await call(server, "DELETE", `/v1/locations/${id}`, { token: f.tokens.api })
      expect(removed.json).toEqual({ data: { id, deleted: true }, error: null })
      expect((await call(server, "GET", `/v1/locations/${id}`, { token: f.tokens.api })).status).toBe(404)
    })

    it("making a location primary demotes the previous primary", async () => {
      const a = await call(server, "POST", "/v1/locations", { token: f.tokens.api, body: { name: "A", is_primary: true } })
      const b = await call(server, "POST", "/v1/locations", { token: f.tokens.api, body: { name: "B", is_primary: true } })
      expect(b.status).toBe(201)
      const aNow = await call(server, "GET", `/v1/locations/${a.json.data.id}`, { token: f.tokens.api })
      expect(aNow.json.data.is_primary).toBe(false)
      const primaries = await call(server, "GET", "/v1/locations?is_primary=true", { token: f.tokens.api })
      expect(primaries.json.data.map((l: any) => l.id)).toEqual([b.json.data.id])
    })

    it("answers the documented errors in the envelope with a request id", async () => {
      const none = await call(server, "GET", "/v1/locations")
      expect(none.status).toBe(401)
      expect(none.headers.get("www-authenticate")).toContain("Bearer")
      expect(none.json).toMatchObject({ data: null, error: { code: "unauthorized" } })
      expect(none.json.error.requestId).toBe(none.headers.get("x-request-id"))

      const narrow = await call(server, "GET", "/v1/locations", { token: f.tokens.narrow })
      expect(narrow.status).toBe(403)
      expect(narrow.json.error.code).toBe("insufficient_scope")
      expect(narrow.headers.get("www-authenticate")).toContain(`scope="locations:read"`)

      const tooMany = await call(server, "GET", "/v1/locations?perPage=101", { token: f.tokens.api })
      expect(tooMany.status).toBe(400)
      expect(tooMany.json.error.code).toBe("validation_failed")
      expect(tooMany.json.error.details).toEqual([{ field: "perPage", issue: expect.any(String) }])

      const broken = await call(server, "POST", "/v1/locations", { token: f.tokens.api, rawBody: "{\"name\":" })
      expect(broken.status).toBe(400)
      expect(broken.json.error.code).toBe("invalid_json")

      const invalid = await call(server, "POST", "/v1/locations", {
        token: f.tokens.api,
        body: { name: " ", latitude: 91, vertical_type: "castle", owner: "me" }
      })
      expect(invalid.status).toBe(400)
      expect(invalid.json.error.details.map((d: any) => d.field).sort()).toEqual(["latitude", "name", "owner", "vertical_type"])

      const unknownRoute = await call(server, "GET", "/v1/nowhere", { token: f.tokens.api })
      expect(unknownRoute.status).toBe(404)
      expect(unknownRoute.json.error.code).toBe("not_found")

      const tooLarge = await call(server, "POST", "/v1/locations", {
        token: f.tokens.api,
        rawBody: JSON.stringify({ name: "x".repeat(1_100_000) })
      })
      expect(tooLarge.status).toBe(413)
      expect(tooLarge.json.error.code).toBe("payload_too_large")

      const wrongType = await call(server, "POST", "/v1/locations", {
        token: f.tokens.api,
        rawBody: "name=x",
        headers: { "content-type": "application/x-www-form-urlencoded" }
      })
      expect(wrongType.status).toBe(415)
      expect(wrongType.json.error.code).toBe("unsupported_media_type")
    })

    it("refuses a half-given coordinate pair and a duplicate code", async () => {
      const half = await call(server, "POST", "/v1/locations", { token: f.tokens.api, body: { name: "X", latitude: 10 } })
      expect(half.status).toBe(400)
      expect(half.json.error.details).toEqual([{ field: "longitude", issue: "latitude and longitude go together" }])
      await call(server, "POST", "/v1/locations", { token: f.tokens.api, body: { name: "Y", code: "DUP" } })
      const dup = await call(server, "POST", "/v1/locations", { token: f.tokens.api, body: { name: "Z", code: "dup" } })
      expect(dup.status).toBe(409)
      expect(dup.json.error.code).toBe("conflict")
    })

    it("answers NotFound, not a database error, when core itself is asked for a malformed id", async () => {
      const errors = await server.run(Effect.gen(function*() {
        const locations = yield* Locations.Locations
        const expenses = yield* Expenses.Expenses
        return [
          yield* Effect.flip(locations.get(f.live, "not-a-uuid")),
          yield* Effect.flip(locations.remove(f.live, "not-a-uuid")),
          yield* Effect.flip(expenses.get(f.live, "not-a-uuid"))
        ]
      }))
      expect(errors.map((e) => e._tag)).toEqual(["NotFound", "NotFound", "NotFound"])
    })

    it("refuses a NUL character in a string as the caller's mistake, and keeps an escaped backslash-u as text", async () => {
      const nul = await call(server, "POST", "/v1/locations", {
        token: f.tokens.api,
        rawBody: '{"name":"Depot\\u0000North"}'
      })
      expect(nul.status).toBe(400)
      expect(nul.json.error).toMatchObject({ code: "validation_failed", details: [{ field: "name" }] })
      const literal = await call(server, "POST", "/v1/locations", {
        token: f.tokens.api,
        rawBody: '{"name":"Depot \\\\u0000 North"}'
      })
      expect(literal.status).toBe(201)
      expect(literal.json.data.name).toBe("Depot \\u0000 North")
    })
  })
}
