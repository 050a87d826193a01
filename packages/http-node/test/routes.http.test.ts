import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Events, Tenancy } from "@opsplatform/core"
import { type Fixture, sampleFleetCostProfile, sampleRateCard, sampleSenderAddress, sampleStops } from "@opsplatform/testing"
import { testDatabases } from "./support/databases.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"

const route = (overrides: Record<string, unknown> = {}) => ({
  name: "Morning run",
  route_date: "2026-03-02T07:00:00+02:00",
  start_latitude: 44.4912,
  start_longitude: 26.1718,
  stops: sampleStops(3),
  ...overrides
})

for (const db of testDatabases()) {
  describe(`/v1/delivery-routes over HTTP (${db.name})`, () => {
    let server: TestServer
    let f: Fixture
    let driverId: string
    /** Registered vehicles of the organization, without capacities of their own (routes take only these). */
    let vehicleId: string
    let otherVehicleId: string
    beforeAll(async () => {
      server = await startTestServer(db.choice())
      f = await seedFixture(server)
      driverId = await server.run(Effect.gen(function*() {
        const tenancy = yield* Tenancy.Tenancy
        const driver = yield* tenancy.createUser({ email: `driver-${f.organizationId}@example.test`, name: "Dana Driver" })
        yield* tenancy.addMember(f.organizationId, driver.id, "driver")
        return driver.id
      }))
      const vehicle = async (plate: string) => {
        const res = await call(server, "POST", "/v1/fleet-vehicles", { token: f.tokens.api, body: { plate, fuel_type: "diesel" } })
        expect(res.status, res.text).toBe(201)
        return res.json.data.id as string
      }
      vehicleId = await vehicle("B 201 RTE")
      otherVehicleId = await vehicle("B 202 RTE")
    })
    afterAll(() => server.close())

    const post = (path: string, body?: unknown, token = f.tokens.api) =>
      call(server, "POST", path, { token, ...(body === undefined ? {} : { body }) })
    const create = async (overrides: Record<string, unknown> = {}) => {
      const res = await post("/v1/delivery-routes", route(overrides))
      expect(res.status, res.text).toBe(201)
      return res.json.data
    }

    it("creates a DRAFT with its stops and reads it back, the list without stops", async () => {
      const created = await create()
      expect(created).toMatchObject({
        status: "DRAFT",
        name: "Morning run",
        route_date: "2026-03-02T05:00:00.000Z",
        round_trip: true,
        start_location_id: null,
        stop_count: 3,
        dispatch_count: 0,
        total_distance_km: null,
        gate_visit_id: null
      })
      expect(created.number).toMatch(/^R-\d{6}$/)
      expect(created.stops.map((s: any) => [s.position, s.label, s.parcels])).toEqual([
        [1, "Customer 1", 1],
        [2, "Customer 2", 2],
        [3, "Customer 3", 3]
      ])
      const got = await call(server, "GET", `/v1/delivery-routes/${created.id}`, { token: f.tokens.api })
      expect(got.json).toEqual({ data: created, error: null })
      const list = await call(server, "GET", "/v1/delivery-routes?perPage=1", { token: f.tokens.api })
      expect(list.json.data[0]).toEqual(Object.fromEntries(Object.entries(created).filter(([k]) => k !== "stops")))
      expect(list.json.meta).toMatchObject({ page: 1, perPage: 1 })
    })

    it("numbers routes in sequence per organization", async () => {
      const g = await seedFixture(server)
      const numbers: Array<string> = []
      for (let i = 0; i < 3; i++) {
        numbers.push((await post("/v1/delivery-routes", route({ stops: [] }), g.tokens.api)).json.data.number)
      }
      expect(numbers).toEqual(["R-000001", "R-000002", "R-000003"])
      expect((await post("/v1/delivery-routes", route(), g.tokens.sandbox)).json.data.number).toBe("R-000001")
    })

    it("refuses bad input with one detail per failing field", async () => {
      const stops = sampleStops(2)
      const res = await post("/v1/delivery-routes", {
        ...route(),
        route_date: "2026-03-02",
        start_latitude: 91,
        capacity_kg: 10.0001,
        colour: "red",
        stops: [{ ...stops[0], parcels: 0 }, { ...stops[1], label: "", window_start: "25:00" }]
      })
      expect(res.status).toBe(400)
      expect(res.json.error.code).toBe("validation_failed")
      expect(res.json.error.details.map((d: any) => d.field).sort()).toEqual([
        "capacity_kg",
        "colour",
        "route_date",
        "start_latitude",
        "stops.0.parcels",
        "stops.1.label",
        "stops.1.window_start"
      ])
      const missingStart = await post("/v1/delivery-routes", { name: "x", route_date: "2026-03-02T07:00:00Z" })
      expect(missingStart.status).toBe(400)
      expect(missingStart.json.error.details).toEqual([
        { field: "start_location_id", issue: "a route needs a start: start_location_id, or start_latitude and start_longitude" }
      ])
    })

    it("answers a malformed id with 400 and an unknown one with 404, both in the envelope", async () => {
      const malformed = await call(server, "GET", "/v1/delivery-routes/not-a-uuid", { token: f.tokens.api })
      expect(malformed.status).toBe(400)
      expect(malformed.json.error.details[0].field).toBe("id")
      const unknown = await call(server, "GET", "/v1/delivery-routes/00000000-0000-4000-8000-00000000dead", { token: f.tokens.api })
      expect(unknown.status).toBe(404)
      expect(unknown.json.error.code).toBe("not_found")
    })

    it("starts from a location of the organization; another tenant's location is 404", async () => {
      const depot = (await post("/v1/locations", { name: "Depot", latitude: 44.5, longitude: 26.2 })).json.data
      const { start_latitude: _, start_longitude: __, ...rest } = route()
      const fromDepot = await post("/v1/delivery-routes", { ...rest, start_location_id: depot.id })
      expect(fromDepot.status).toBe(201)
      expect([fromDepot.json.data.start_latitude, fromDepot.json.data.start_longitude]).toEqual([44.5, 26.2])
      const sandboxDepot = (await post("/v1/locations", { name: "Depot", latitude: 1, longitude: 1 }, f.tokens.sandbox)).json.data
      const foreign = await post("/v1/delivery-routes", { ...rest, start_location_id: sandboxDepot.id })
      expect(foreign.status).toBe(404)
      expect(foreign.json.error.code).toBe("not_found")
    })

    it("filters the list by status and by route date, newest first", async () => {
      const g = await seedFixture(server)
      const make = async (routeDate: string) =>
        (await post("/v1/delivery-routes", route({ route_date: routeDate }), g.tokens.api)).json.data.id
      const march1 = await make("2026-03-01T09:00:00Z")
      const march2 = await make("2026-03-02T09:00:00Z")
      const march3 = await make("2026-03-03T09:00:00Z")
      await post(`/v1/delivery-routes/${march2}/optimize`, undefined, g.tokens.api)
      const q = async (qs: string) => (await call(server, "GET", `/v1/delivery-routes?${qs}`, { token: g.tokens.api })).json
      expect((await q("")).data.map((r: any) => r.id)).toEqual([march3, march2, march1])
      expect((await q("date_from=2026-03-02")).data.map((r: any) => r.id)).toEqual([march3, march2])
      expect((await q("date_to=2026-03-02")).data.map((r: any) => r.id)).toEqual([march2, march1])
      expect((await q("date_from=2026-03-02&date_to=2026-03-02")).meta.total).toBe(1)
      expect((await q("status=PLANNED")).data.map((r: any) => r.id)).toEqual([march2])
      const bad = await call(server, "GET", "/v1/delivery-routes?status=LOST&date_from=yesterday", { token: g.tokens.api })
      expect(bad.status).toBe(400)
      expect(bad.json.error.details.map((d: any) => d.field).sort()).toEqual(["date_from", "status"])
    })

    it("edits stops while planning, and refuses with 409 once dispatched", async () => {
      const created = await create({ driver_id: driverId, vehicle_id: vehicleId })
      const base = `/v1/delivery-routes/${created.id}`
      const added = await post(`${base}/stops`, { label: "Extra", latitude: 44.44, longitude: 26.11, weight_kg: 2.5 })
      expect(added.status).toBe(201)
      expect(added.json.data.stops.map((s: any) => s.label)).toEqual(["Customer 1", "Customer 2", "Customer 3", "Extra"])
      const extra = added.json.data.stops[3].id
      const updated = await call(server, "PATCH", `${base}/stops/${extra}`, {
        token: f.tokens.api,
        body: { parcels: 4, window_start: "10:00", window_end: "09:00" }
      })
      expect(updated.status).toBe(400)
      expect(updated.json.error.details).toEqual([{ field: "window_end", issue: "must be later than window_start" }])
      const order = [...added.json.data.stops].reverse().map((s: any) => s.id)
      const reordered = await post(`${base}/stops/reorder`, { stop_ids: order })
      expect(reordered.json.data.stops.map((s: any) => s.id)).toEqual(order)
      const duplicate = await post(`${base}/stops/reorder`, { stop_ids: [order[0], order[0]] })
      expect(duplicate.status).toBe(400)
      const removed = await call(server, "DELETE", `${base}/stops/${extra}`, { token: f.tokens.api })
      expect(removed.json.data.stops.map((s: any) => s.position)).toEqual([1, 2, 3])
      expect((await post(`${base}/optimize`)).json.data.status).toBe("PLANNED")
      expect((await post(`${base}/dispatch`)).json.data.status).toBe("DISPATCHED")
      const late = await post(`${base}/stops`, { label: "Too late", latitude: 44.44, longitude: 26.11 })
      expect(late.status).toBe(409)
      expect(late.json.error.code).toBe("conflict")
      const lateRemove = await call(server, "DELETE", `${base}/stops/${order[1]}`, { token: f.tokens.api })
      expect(lateRemove.status).toBe(409)
    })

    it("refuses every move the lifecycle forbids with invalid_transition naming both states", async () => {
      const created = await create()
      const base = `/v1/delivery-routes/${created.id}`
      const refusals: Array<[string, string]> = [["dispatch", "DISPATCHED"], ["start", "IN_PROGRESS"], ["complete", "COMPLETED"]]
      for (const [action, to] of refusals) {
        const res = await post(`${base}/${action}`)
        expect(res.status).toBe(409)
        expect(res.json.error.code).toBe("invalid_transition")
        expect(res.json.error.message).toBe(`A delivery route cannot go from DRAFT to ${to}`)
      }
      expect((await post(`${base}/cancel`)).json.data.status).toBe("CANCELLED")
      const reopen = await post(`${base}/optimize`)
      expect(reopen.status).toBe(409)
      expect(reopen.json.error.message).toBe("A delivery route cannot go from CANCELLED to PLANNED")
    })

    it("dispatches only with a driver who is a member and a vehicle; 422 otherwise", async () => {
      const created = await create()
      const base = `/v1/delivery-routes/${created.id}`
      await post(`${base}/optimize`)
      const noDriver = await post(`${base}/dispatch`)
      expect([noDriver.status, noDriver.json.error.code]).toEqual([422, "driver_required"])
      const stranger = await seedFixture(server)
      const foreignDriver = await call(server, "PATCH", base, { token: f.tokens.api, body: { driver_id: stranger.userId } })
      expect([foreignDriver.status, foreignDriver.json.error.code]).toEqual([404, "not_found"])
      await call(server, "PATCH", base, { token: f.tokens.api, body: { driver_id: driverId } })
      const noVehicle = await post(`${base}/dispatch`)
      expect([noVehicle.status, noVehicle.json.error.code]).toEqual([422, "vehicle_required"])
    })

    it("dispatch emits delivery_route.dispatched with the spec's payload; a re-dispatch is a second event", async () => {
      const created = await create({ driver_id: driverId, vehicle_id: vehicleId })
      const base = `/v1/delivery-routes/${created.id}`
      await post(`${base}/optimize`)
      const first = (await post(`${base}/dispatch`)).json.data
      const other = otherVehicleId
      await call(server, "PATCH", base, { token: f.tokens.api, body: { vehicle_id: other } })
      const second = (await post(`${base}/dispatch`)).json.data
      expect([first.dispatch_count, second.dispatch_count]).toEqual([1, 2])
      const events = await server.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql`SELECT event_id, type, data FROM outbox_events
          WHERE organization_id = ${f.organizationId} AND type = 'delivery_route.dispatched'
            AND data->>'id' = ${created.id} ORDER BY created_at, event_id`
      }))
      expect(events).toEqual([
        {
          event_id: Events.routeDispatchedEventId(created.id, 1),
          type: "delivery_route.dispatched",
          data: { id: created.id, number: created.number, driver_id: driverId, vehicle_id: vehicleId, stop_count: 3, dispatched_at: first.dispatched_at }
        },
        {
          event_id: Events.routeDispatchedEventId(created.id, 2),
          type: "delivery_route.dispatched",
          data: { id: created.id, number: created.number, driver_id: driverId, vehicle_id: other, stop_count: 3, dispatched_at: second.dispatched_at }
        }
      ])
      expect((await post(`${base}/start`)).json.data.status).toBe("IN_PROGRESS")
      expect((await post(`${base}/complete`)).json.data.status).toBe("COMPLETED")
    })

    it("a dispatch retried with the same Idempotency-Key runs once and emits one event", async () => {
      const created = await create({ driver_id: driverId, vehicle_id: vehicleId })
      await post(`/v1/delivery-routes/${created.id}/optimize`)
      const send = () =>
        call(server, "POST", `/v1/delivery-routes/${created.id}/dispatch`, {
          token: f.tokens.api,
          headers: { "idempotency-key": `dispatch-${created.id}` }
        })
      const first = await send()
      const retry = await send()
      expect(retry.headers.get("idempotent-replayed")).toBe("true")
      expect(retry.json).toEqual(first.json)
      expect((await call(server, "GET", `/v1/delivery-routes/${created.id}`, { token: f.tokens.api })).json.data.dispatch_count).toBe(1)
      const events = await server.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql`SELECT event_id FROM outbox_events WHERE organization_id = ${f.organizationId}
          AND type = 'delivery_route.dispatched' AND data->>'id' = ${created.id}`
      }))
      expect(events).toEqual([{ event_id: Events.routeDispatchedEventId(created.id, 1) }])
    })

    it("optimizes, and refuses an overloaded vehicle with 422 capacity_exceeded", async () => {
      const created = await create({ capacity_parcels: 5 }) // the stops carry 1 + 2 + 3 = 6 parcels
      const refused = await post(`/v1/delivery-routes/${created.id}/optimize`)
      expect(refused.status).toBe(422)
      expect(refused.json.error.code).toBe("capacity_exceeded")
      expect(refused.json.error.message).toContain("6 parcels for a capacity of 5")
      await call(server, "PATCH", `/v1/delivery-routes/${created.id}`, { token: f.tokens.api, body: { capacity_parcels: null } })
      const planned = (await post(`/v1/delivery-routes/${created.id}/optimize`)).json.data
      expect(planned).toMatchObject({ status: "PLANNED", optimizer: "builtin:nearest-neighbour+2-opt" })
      expect(planned.total_distance_km).toBeGreaterThan(0)
      expect(planned.optimized_at).not.toBeNull()
    })

    describe("costing settings and the comparison", () => {
      let g: Fixture
      beforeAll(async () => {
        g = await seedFixture(server)
      })
      const put = (path: string, body: unknown) => call(server, "PUT", path, { token: g.tokens.api, body })

      it("keeps the fleet cost profile, rate card and sender address; 404 before the first PUT", async () => {
        for (const path of ["/v1/fleet-cost-profile", "/v1/courier-rate-card", "/v1/sender-address"]) {
          const none = await call(server, "GET", path, { token: g.tokens.api })
          expect(none.status).toBe(404)
        }
        const profile = await put("/v1/fleet-cost-profile", sampleFleetCostProfile)
        expect(profile.status).toBe(200)
        expect(profile.json.data).toMatchObject({ ...sampleFleetCostProfile, co2_grams_per_litre: 3197 })
        expect((await call(server, "GET", "/v1/fleet-cost-profile", { token: g.tokens.api })).json.data).toEqual(profile.json.data)
        expect((await put("/v1/courier-rate-card", sampleRateCard)).json.data).toMatchObject(sampleRateCard)
        expect((await put("/v1/sender-address", sampleSenderAddress)).json.data).toMatchObject({ ...sampleSenderAddress, line2: null })
        // The sandbox keeps its own settings.
        expect((await call(server, "GET", "/v1/fleet-cost-profile", { token: g.tokens.sandbox })).status).toBe(404)
      })

      it("validates the settings field by field", async () => {
        const profile = await put("/v1/fleet-cost-profile", {
          ...sampleFleetCostProfile,
          fuel_price_per_litre_minor: 7.45,
          fuel_consumption_l_per_100km: -1,
          currency: "EURO"
        })
        expect(profile.json.error.details.map((d: any) => d.field).sort()).toEqual([
          "currency",
          "fuel_consumption_l_per_100km",
          "fuel_price_per_litre_minor"
        ])
        const { annual_km: _, ...noAnnualKm } = sampleFleetCostProfile
        const insurance = await put("/v1/fleet-cost-profile", noAnnualKm)
        expect(insurance.json.error.details.map((d: any) => d.field)).toEqual(["annual_km"])
        const bands = await put("/v1/courier-rate-card", {
          currency: "RON",
          couriers: [
            { name: "A", bands: [{ up_to_km: 10, per_parcel_minor: 1, per_kg_minor: 1 }, { up_to_km: 5, per_parcel_minor: 1, per_kg_minor: 1 }] },
            { name: "a", bands: [{ up_to_km: 10, per_parcel_minor: 1, per_kg_minor: 1 }] }
          ]
        })
        expect(bands.json.error.details.map((d: any) => d.field)).toEqual(["couriers.0.bands.1.up_to_km", "couriers.1.name"])
        const address = await put("/v1/sender-address", { ...sampleSenderAddress, country: "Romania" })
        expect(address.json.error.details.map((d: any) => d.field)).toEqual(["country"])
      })

      it("compares a route: every field of the spec, MARGINAL by default, FULL on request in any case", async () => {
        const created = (await post("/v1/delivery-routes", route({ stops: sampleStops(8) }), g.tokens.api)).json.data
        const url = `/v1/delivery-routes/${created.id}/cost-comparison`
        const marginal = await call(server, "GET", url, { token: g.tokens.api })
        expect(marginal.status).toBe(200)
        expect(Object.keys(marginal.json.data).sort()).toEqual([
          "breakEvenStops", "breakdown", "co2Grams", "courierProjectedMinor", "currency", "estimatedPercent", "estimatedStops",
          "fleetMinor", "fleetPerKmMinor", "hybridSavingMinor", "hybridStops", "mode", "pricedStops", "savingMinor",
          "senderMissing", "unpricedStops", "verdict"
        ])
        expect(marginal.json.data).toMatchObject({ currency: "RON", mode: "MARGINAL", pricedStops: 8, unpricedStops: 0, senderMissing: false })
        expect(marginal.json.data.breakdown.map((c: any) => c.category)).toEqual(["FUEL", "DRIVER", "TOLLS"])
        for (const mode of ["full", "FULL", "Full"]) {
          const full = await call(server, "GET", `${url}?mode=${mode}`, { token: g.tokens.api })
          expect(full.json.data.mode).toBe("FULL")
          expect(full.json.data.fleetMinor).toBeGreaterThan(marginal.json.data.fleetMinor)
        }
        const bad = await call(server, "GET", `${url}?mode=cheapest`, { token: g.tokens.api })
        expect(bad.status).toBe(400)
        expect(bad.json.error.details).toEqual([{ field: "mode", issue: "must be marginal or full" }])
      })

      it("answers 422 route_has_no_stops for a route without stops", async () => {
        const empty = (await post("/v1/delivery-routes", route({ stops: [] }), g.tokens.api)).json.data
        const res = await call(server, "GET", `/v1/delivery-routes/${empty.id}/cost-comparison`, { token: g.tokens.api })
        expect(res.status).toBe(422)
        expect(res.json).toMatchObject({ data: null, error: { code: "route_has_no_stops" } })
      })
    })
  })
}
