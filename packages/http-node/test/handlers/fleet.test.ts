import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makeFixture, MemoryStore } from "@opsplatform/testing"
import { ApiTestLayer, call, client, expectNotFound, invalidFields, outsiders } from "../support/api.ts"

/** The fleet events the memory store holds for an organization, oldest first. */
const fleetEvents = (organizationId: string) =>
  Effect.map(MemoryStore, (store) =>
    [...store.table<{ organizationId: string; type: string; data: Record<string, unknown> }>("outbox_events").values()]
      .filter((e) => e.organizationId === organizationId && e.type.startsWith("fleet_vehicle."))
      .map((e) => [e.type, e.data]))

describe("/v1/fleet-vehicles handlers over the memory core", () => {
  layer(ApiTestLayer)((it) => {
    it.effect("creates, reads, edits and deletes a vehicle, its plate normalised", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const api = yield* client(f.tokens.api)
        const created = yield* api.fleet.create({
          payload: { plate: "b-123-abc", make: " Ford ", model: "Transit", fuel_type: "diesel", capacity_kg: 1200.5, capacity_parcels: 90 }
        })
        expect(created.data).toMatchObject({
          plate: "B123ABC",
          make: "Ford",
          model: "Transit",
          fuel_type: "diesel",
          capacity_kg: 1200.5,
          capacity_parcels: 90,
          fuel_consumption_l_per_100km: null,
          active: true
        })
        const id = created.data.id
        expect(yield* api.fleet.get({ params: { id } })).toEqual(created)
        const updated = yield* api.fleet.update({ params: { id }, payload: { fuel_consumption_l_per_100km: 9.5, active: false } })
        expect(updated.data).toMatchObject({ id, fuel_consumption_l_per_100km: 9.5, active: false })
        expect(yield* api.fleet.remove({ params: { id } })).toEqual({ data: { id, deleted: true }, error: null })
        expectNotFound(yield* Effect.flip(api.fleet.get({ params: { id } })))
        expect(yield* fleetEvents(f.organizationId)).toEqual([
          ["fleet_vehicle.created", { id, plate: "B123ABC" }],
          ["fleet_vehicle.updated", { id, plate: "B123ABC", changed_fields: ["fuel_consumption_l_per_100km", "active"] }],
          ["fleet_vehicle.deleted", { id, plate: "B123ABC" }]
        ])
      }))

    it.effect("a PATCH that sends what is stored answers 200 with the vehicle as it was and publishes nothing", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const created = yield* call("POST", "/v1/fleet-vehicles", { token: f.tokens.api, body: { plate: "CJ 12 ABC", fuel_type: "lpg" } })
        const id = created.json.data.id
        const same = yield* call("PATCH", `/v1/fleet-vehicles/${id}`, {
          token: f.tokens.api,
          body: { plate: "cj-12-abc", fuel_type: "lpg", active: true, make: null }
        })
        expect(same.status).toBe(200)
        expect(same.json).toEqual(created.json)
        expect((yield* fleetEvents(f.organizationId)).map(([type]) => type)).toEqual(["fleet_vehicle.created"])
      }))

    it.effect("lists newest first, filtered by active and fuel type", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const api = yield* client(f.tokens.api)
        const make = (plate: string, fuel_type: "diesel" | "electric", active = true) =>
          Effect.map(api.fleet.create({ payload: { plate, fuel_type, active } }), (r) => r.data.id)
        const a = yield* make("B 01 AAA", "diesel")
        const b = yield* make("B 02 AAA", "electric")
        const c = yield* make("B 03 AAA", "diesel", false)
        expect((yield* api.fleet.list({ query: {} })).data.map((v) => v.id)).toEqual([c, b, a])
        expect((yield* api.fleet.list({ query: { active: false } })).data.map((v) => v.id)).toEqual([c])
        expect((yield* api.fleet.list({ query: { fuel_type: "diesel", active: true } })).data.map((v) => v.id)).toEqual([a])
        const paged = yield* api.fleet.list({ query: { perPage: 2, page: 2 } })
        expect([paged.data.map((v) => v.id), paged.meta.total]).toEqual([[a], 3])
      }))

    it.effect("refuses bad input naming every field, and a plate taken in the organization with 409", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const token = f.tokens.api
        const invalid = yield* call("POST", "/v1/fleet-vehicles", {
          token,
          body: {
            plate: "XX 12 ABC",
            fuel_type: "steam",
            capacity_kg: 0,
            capacity_parcels: 1e20,
            fuel_consumption_l_per_100km: 9.1234,
            colour: "red"
          }
        })
        expect(invalidFields(invalid)).toEqual(["capacity_kg", "capacity_parcels", "colour", "fuel_consumption_l_per_100km", "fuel_type", "plate"])
        expect(invalid.json.error.details.find((d: { field: string }) => d.field === "plate").issue).toBe(
          "must be a Romanian registration plate, e.g. B 123 ABC, CJ 12 ABC or B 012345"
        )
        expect(invalidFields(yield* call("POST", "/v1/fleet-vehicles", { token, body: { make: "Ford" } }))).toEqual(["fuel_type", "plate"])
        const electric = yield* call("POST", "/v1/fleet-vehicles", {
          token,
          body: { plate: "B 12 EVE", fuel_type: "electric", fuel_consumption_l_per_100km: 5 }
        })
        expect(electric.json.error.details).toEqual([
          { field: "fuel_consumption_l_per_100km", issue: "an electric vehicle burns no fuel; leave it null" }
        ])
        for (const [query, field] of [["active=yes", "active"], ["fuel_type=coal", "fuel_type"], ["plate=B1", "plate"]]) {
          expect(invalidFields(yield* call("GET", `/v1/fleet-vehicles?${query}`, { token }), query)).toEqual([field])
        }
        yield* call("POST", "/v1/fleet-vehicles", { token, body: { plate: "B 123 ABC", fuel_type: "diesel" } })
        const twin = yield* call("POST", "/v1/fleet-vehicles", { token, body: { plate: "b123abc", fuel_type: "petrol" } })
        expect([twin.status, twin.json.error.code, twin.json.error.message]).toEqual([
          409,
          "conflict",
          "Another vehicle of the organization already has this plate"
        ])
        // The sandbox is another register.
        expect((yield* call("POST", "/v1/fleet-vehicles", { token: f.tokens.sandbox, body: { plate: "B 123 ABC", fuel_type: "diesel" } })).status)
          .toBe(201)
      }))

    it.effect("answers 404 to another organization and the other environment, and changes nothing", () =>
      Effect.gen(function*() {
        const owner = yield* makeFixture()
        const mine = yield* client(owner.tokens.api)
        const id = (yield* mine.fleet.create({ payload: { plate: "B 77 MNE", fuel_type: "diesel" } })).data.id
        for (const api of yield* outsiders(owner)) {
          expectNotFound(yield* Effect.flip(api.fleet.get({ params: { id } })))
          expectNotFound(yield* Effect.flip(api.fleet.update({ params: { id }, payload: { active: false } })))
          expectNotFound(yield* Effect.flip(api.fleet.remove({ params: { id } })))
        }
        expect((yield* mine.fleet.get({ params: { id } })).data.active).toBe(true)
        expect((yield* fleetEvents(owner.organizationId)).length).toBe(1)
      }))

    it.effect("asks for fleet:read to read and fleet:write to change", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const narrow = yield* call("GET", "/v1/fleet-vehicles", { token: f.tokens.narrow })
        expect(narrow.status).toBe(403)
        expect(narrow.headers["www-authenticate"]).toContain(`scope="fleet:read"`)
        const write = yield* call("POST", "/v1/fleet-vehicles", { token: f.tokens.narrow, body: { plate: "B 10 XYZ", fuel_type: "diesel" } })
        expect(write.headers["www-authenticate"]).toContain(`scope="fleet:write"`)
      }))
  })
})
