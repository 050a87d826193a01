import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makeFixture } from "@opsplatform/testing"
import { ApiTestLayer, call, client, expectNotFound, invalidFields, outsiders } from "../support/api.ts"

describe("/v1/locations handlers over the memory core", () => {
  layer(ApiTestLayer)((it) => {
    it.effect("creates, reads, updates and deletes a location", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const api = yield* client(f.tokens.api)
        const created = yield* api.locations.create({
          payload: { name: "Depot North", code: "DN", vertical_type: "warehouse", latitude: 44.5, longitude: 26.08 }
        })
        expect(created.error).toBeNull()
        expect(created.data).toMatchObject({
          name: "Depot North",
          code: "DN",
          vertical_type: "warehouse",
          is_primary: false,
          address: null,
          latitude: 44.5,
          longitude: 26.08
        })
        const id = created.data.id
        expect(yield* api.locations.get({ params: { id } })).toEqual(created)

        const updated = yield* api.locations.update({ params: { id }, payload: { name: "Depot N.", is_primary: true } })
        expect(updated.data).toMatchObject({ id, name: "Depot N.", code: "DN", is_primary: true })
        expect(yield* api.locations.get({ params: { id } })).toEqual(updated)

        expect(yield* api.locations.remove({ params: { id } })).toEqual({ data: { id, deleted: true }, error: null })
        expectNotFound(yield* Effect.flip(api.locations.get({ params: { id } })))
      }))

    it.effect("answers with the statuses and the request id the server sends", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const created = yield* call("POST", "/v1/locations", { token: f.tokens.api, body: { name: "Kiosk" } })
        expect(created.status).toBe(201)
        expect(created.headers["x-request-id"]).toMatch(/^req_[0-9a-f]{24}$/)
        const id = created.json.data.id
        expect((yield* call("GET", `/v1/locations/${id}`, { token: f.tokens.api })).status).toBe(200)
        expect((yield* call("DELETE", `/v1/locations/${id}`, { token: f.tokens.api })).status).toBe(200)
        const missing = yield* call("DELETE", `/v1/locations/${id}`, { token: f.tokens.api })
        expect(missing.status).toBe(404)
        expect(missing.json.error.requestId).toBe(missing.headers["x-request-id"])
      }))

    it.effect("lists newest first, filters, and pages by number and by cursor", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const api = yield* client(f.tokens.api)
        const make = (name: string, vertical_type: "warehouse" | "office", is_primary = false) =>
          Effect.map(api.locations.create({ payload: { name, vertical_type, is_primary } }), (r) => r.data.id)
        const a = yield* make("A", "warehouse")
        const b = yield* make("B", "office", true)
        const c = yield* make("C", "warehouse")
        const d = yield* make("D", "warehouse")

        const all = yield* api.locations.list({ query: {} })
        expect(all.data.map((l) => l.id)).toEqual([d, c, b, a])
        expect(all.meta).toEqual({ page: 1, perPage: 25, total: 4, totalPages: 1, nextCursor: null })

        const warehouses = yield* api.locations.list({ query: { vertical_type: "warehouse" } })
        expect(warehouses.data.map((l) => l.id)).toEqual([d, c, a])
        const primary = yield* api.locations.list({ query: { is_primary: true } })
        expect(primary.data.map((l) => l.id)).toEqual([b])
        const notPrimaryWarehouses = yield* api.locations.list({ query: { vertical_type: "warehouse", is_primary: false } })
        expect(notPrimaryWarehouses.meta.total).toBe(3)

        const first = yield* api.locations.list({ query: { perPage: 3 } })
        expect(first.data.map((l) => l.id)).toEqual([d, c, b])
        expect(first.meta).toMatchObject({ page: 1, perPage: 3, total: 4, totalPages: 2 })
        expect(first.meta.nextCursor).toEqual(expect.any(String))
        const second = yield* api.locations.list({ query: { perPage: 3, page: 2 } })
        expect(second.data.map((l) => l.id)).toEqual([a])
        expect(second.meta.nextCursor).toBeNull()
        const byCursor = yield* api.locations.list({ query: { perPage: 3, cursor: first.meta.nextCursor! } })
        expect(byCursor.data.map((l) => l.id)).toEqual([a])
        const beyond = yield* api.locations.list({ query: { perPage: 3, page: 3 } })
        expect(beyond.data).toEqual([])
      }))

    it.effect("answers 404 for another organization's or environment's location, and changes nothing", () =>
      Effect.gen(function*() {
        const owner = yield* makeFixture()
        const mine = yield* client(owner.tokens.api)
        const id = (yield* mine.locations.create({ payload: { name: "Private depot" } })).data.id
        for (const api of yield* outsiders(owner)) {
          expectNotFound(yield* Effect.flip(api.locations.get({ params: { id } })))
          expectNotFound(yield* Effect.flip(api.locations.update({ params: { id }, payload: { name: "Taken" } })))
          expectNotFound(yield* Effect.flip(api.locations.remove({ params: { id } })))
          expect((yield* api.locations.list({ query: {} })).data).toEqual([])
        }
        expect((yield* mine.locations.get({ params: { id } })).data.name).toBe("Private depot")
      }))

    it.effect("refuses invalid input with 400 validation_failed naming every field", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const token = f.tokens.api
        const invalid = yield* call("POST", "/v1/locations", {
          token,
          body: { name: " ", latitude: 91, vertical_type: "castle", owner: "me" }
        })
        expect(invalidFields(invalid)).toEqual(["latitude", "name", "owner", "vertical_type"])

        const half = yield* call("POST", "/v1/locations", { token, body: { name: "X", latitude: 10 } })
        expect(invalidFields(half)).toEqual(["longitude"])
        expect(half.json.error.details).toEqual([{ field: "longitude", issue: "latitude and longitude go together" }])

        const id = (yield* call("POST", "/v1/locations", { token, body: { name: "Y" } })).json.data.id
        const badPatch = yield* call("PATCH", `/v1/locations/${id}`, { token, body: { code: "no spaces", is_primary: "yes" } })
        expect(invalidFields(badPatch)).toEqual(["code", "is_primary"])

        const badId = yield* call("GET", "/v1/locations/not-a-uuid", { token })
        expect(invalidFields(badId)).toEqual(["id"])
        expect(badId.json.error.details).toEqual([{ field: "id", issue: expect.any(String) }])

        for (const [query, field] of [["perPage=101", "perPage"], ["page=0", "page"], ["is_primary=maybe", "is_primary"], ["colour=red", "colour"]]) {
          expect(invalidFields(yield* call("GET", `/v1/locations?${query}`, { token }), query)).toEqual([field])
        }

        const broken = yield* call("POST", "/v1/locations", { token, rawBody: "{\"name\":" })
        expect(broken.status).toBe(400)
        expect(broken.json.error.code).toBe("invalid_json")
      }))

    it.effect("refuses a duplicate code with 409 conflict", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        yield* call("POST", "/v1/locations", { token: f.tokens.api, body: { name: "Y", code: "DUP" } })
        const dup = yield* call("POST", "/v1/locations", { token: f.tokens.api, body: { name: "Z", code: "dup" } })
        expect(dup.status).toBe(409)
        expect(dup.json.error.code).toBe("conflict")
      }))

    it.effect("asks for a credential and for the endpoint's scope", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const none = yield* call("GET", "/v1/locations")
        expect(none.status).toBe(401)
        expect(none.json.error.code).toBe("unauthorized")
        const narrow = yield* call("GET", "/v1/locations", { token: f.tokens.narrow })
        expect(narrow.status).toBe(403)
        expect(narrow.headers["www-authenticate"]).toContain(`scope="locations:read"`)
      }))
  })
})
