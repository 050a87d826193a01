import { describe, expect, it } from "vitest"
import { Effect } from "effect"
import { Tenancy } from "@opsplatform/core"
import { sampleFleetCostProfile, sampleRoute } from "@opsplatform/testing"
import { testDatabases } from "./support/databases.ts"
import { receiverCertificateFile } from "./support/receiver.ts"
import { serverWithReceiver } from "./support/receiving.ts"
import { seedFixture } from "./support/server.ts"
import { deliveriesOf, subscribe, useTestWebhookSettings } from "./support/webhooks.ts"

useTestWebhookSettings({ stepMs: 300, timeoutMs: 1_500, caFile: receiverCertificateFile })

const fourEvents = ["fleet_vehicle.created", "fleet_vehicle.updated", "fleet_vehicle.deleted", "court_case.hearing_added"]

for (const db of testDatabases()) {
  describe(`fleet vehicles and routes over HTTP (${db.name})`, () => {
    const ctx = serverWithReceiver(db)
    const request = ctx.request

    it("a subscriber receives created, updated (names only), deleted and hearing_added as the spec writes them; a no-op PATCH delivers nothing; a route refuses another organization's vehicle", async () => {
      const sub = await subscribe(ctx.server, ctx.f.tokens.api, ctx.receiver.url, fourEvents)
      ctx.receiver.secrets = [sub.secret]

      const created = await request("POST", "/v1/fleet-vehicles", {
        plate: "b-123-abc",
        make: "Ford",
        model: "Transit",
        fuel_type: "diesel",
        capacity_kg: 1200,
        capacity_parcels: 80,
        fuel_consumption_l_per_100km: 9.5
      })
      expect(created.status, created.text).toBe(201)
      const vehicle = created.json.data
      expect(vehicle.plate).toBe("B123ABC")
      const twin = await request("POST", "/v1/fleet-vehicles", { plate: "B 123 ABC", fuel_type: "petrol" })
      expect([twin.status, twin.json.error.code]).toEqual([409, "conflict"])

      // The same values, however written: 200, the vehicle as it was, and no event.
      const noop = await request("PATCH", `/v1/fleet-vehicles/${vehicle.id}`, { plate: "B 123 ABC", capacity_kg: 1200, active: true })
      expect(noop.status).toBe(200)
      expect(noop.json.data).toEqual(vehicle)
      const updated = await request("PATCH", `/v1/fleet-vehicles/${vehicle.id}`, { capacity_kg: 1350.5, make: "Ford", active: false })
      expect(updated.json.data).toMatchObject({ capacity_kg: 1350.5, active: false })

      const courtCase = (await request("POST", "/v1/court-cases", {
        number: "1234/3/2026",
        court: "Tribunalul București",
        subject: "pretenții",
        parties: [{ name: "Alfa SRL", role: "reclamant" }, { name: "Beta SA", role: "pârât" }],
        panel: "C5",
        notes: "Strategie: tranzacție"
      })).json.data
      const hearing = await request("POST", `/v1/court-cases/${courtCase.id}/hearings`, {
        hearing_date: "2026-04-15",
        panel: "C7",
        solution: "Amână cauza",
        notes: "Martor absent"
      })
      expect(hearing.status, hearing.text).toBe(201)

      // Another organization's vehicle does not exist for this one.
      const stranger = await seedFixture(ctx.server)
      const theirs = (await request("POST", "/v1/fleet-vehicles", { plate: "B 999 XYZ", fuel_type: "diesel" }, stranger.tokens.api)).json.data
      const refused = await request("POST", "/v1/delivery-routes", sampleRoute({ vehicle_id: theirs.id }))
      expect([refused.status, refused.json.error.code, refused.json.error.message]).toEqual([
        404,
        "not_found",
        `No fleet vehicle with id '${theirs.id}'`
      ])

      const removed = await request("DELETE", `/v1/fleet-vehicles/${vehicle.id}`)
      expect(removed.json).toEqual({ data: { id: vehicle.id, deleted: true }, error: null })
      expect((await request("DELETE", `/v1/fleet-vehicles/${vehicle.id}`)).status).toBe(404)

      const of = (type: string) => ctx.receiver.received.filter((r) => JSON.parse(r.body).type === type)
      await ctx.receiver.until(() => fourEvents.every((type) => of(type).length > 0))
      expect(ctx.receiver.rejected).toEqual([])
      const body = (type: string) => JSON.parse(of(type)[0]!.body)
      const envelope = { created: expect.any(Number), environment: "live" }
      expect(body("fleet_vehicle.created")).toEqual({
        ...envelope,
        id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
        type: "fleet_vehicle.created",
        data: { id: vehicle.id, plate: "B123ABC", organizationId: ctx.f.organizationId }
      })
      expect(body("fleet_vehicle.updated")).toEqual({
        ...envelope,
        id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
        type: "fleet_vehicle.updated",
        data: { id: vehicle.id, plate: "B123ABC", changed_fields: ["capacity_kg", "active"], organizationId: ctx.f.organizationId }
      })
      expect(body("fleet_vehicle.deleted")).toEqual({
        ...envelope,
        id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
        type: "fleet_vehicle.deleted",
        data: { id: vehicle.id, plate: "B123ABC", organizationId: ctx.f.organizationId }
      })
      expect(body("court_case.hearing_added")).toEqual({
        ...envelope,
        id: `evt_court_hearing_${hearing.json.data.id}`,
        type: "court_case.hearing_added",
        data: {
          id: hearing.json.data.id,
          case_id: courtCase.id,
          hearing_date: "2026-04-15",
          court: "Tribunalul București",
          organizationId: ctx.f.organizationId
        }
      })
      // Names only: no value, old or new, travels with an update; no party, panel, solution or notes with a hearing.
      const updatedBody = of("fleet_vehicle.updated")[0]!.body
      for (const value of ["1350.5", "1200", "Ford", "false"]) expect(updatedBody).not.toContain(value)
      const hearingBody = of("court_case.hearing_added")[0]!.body
      for (const secret of ["Alfa", "Beta", "reclamant", "C5", "C7", "Amână", "Martor", "Strategie", "pretenții"]) {
        expect(hearingBody).not.toContain(secret)
      }
      // The no-op PATCH queued nothing, the second DELETE nothing: four events, each delivered once.
      const deliveries = await deliveriesOf(ctx.server, ctx.f.tokens.api, sub.id)
      expect(deliveries.map((d) => d.event_type).sort()).toEqual([...fourEvents].sort())
      expect(new Set(ctx.receiver.received.map((r) => r.headers["webhook-id"])).size).toBe(4)
    })

    it("routes default their capacities from the vehicle, refuse to dispatch an inactive one, and hold it from deletion", async () => {
      const g = await seedFixture(ctx.server)
      const post = (path: string, body?: unknown) => request("POST", path, body, g.tokens.api)
      const driverId = await ctx.server.run(Effect.gen(function*() {
        const tenancy = yield* Tenancy.Tenancy
        const driver = yield* tenancy.createUser({ email: `driver-${g.organizationId}@example.test`, name: "Dana Driver" })
        yield* tenancy.addMember(g.organizationId, driver.id, "driver")
        return driver.id
      }))
      const van = (await post("/v1/fleet-vehicles", { plate: "CJ 10 VAN", fuel_type: "diesel", capacity_kg: 800, capacity_parcels: 5 })).json.data
      const sandboxVan = (await request("POST", "/v1/fleet-vehicles", { plate: "CJ 10 VAN", fuel_type: "diesel" }, g.tokens.sandbox)).json.data
      expect((await post("/v1/delivery-routes", sampleRoute({ vehicle_id: sandboxVan.id }))).status).toBe(404)

      const made = await post("/v1/delivery-routes", sampleRoute({ vehicle_id: van.id, driver_id: driverId }))
      expect(made.json.data).toMatchObject({ vehicle_id: van.id, capacity_kg: 800, capacity_parcels: 5 })
      const base = `/v1/delivery-routes/${made.json.data.id}`
      // The three sample stops carry 6 parcels: the van's capacity refuses them until the route says otherwise.
      expect((await post(`${base}/optimize`)).json.error.code).toBe("capacity_exceeded")
      await request("PATCH", base, { capacity_parcels: 6 }, g.tokens.api)
      expect((await post(`${base}/optimize`)).json.data.status).toBe("PLANNED")

      await request("PATCH", `/v1/fleet-vehicles/${van.id}`, { active: false }, g.tokens.api)
      const inactive = await post(`${base}/dispatch`)
      expect([inactive.status, inactive.json.error.code]).toEqual([422, "vehicle_inactive"])
      await request("PATCH", `/v1/fleet-vehicles/${van.id}`, { active: true }, g.tokens.api)
      expect((await post(`${base}/dispatch`)).json.data.status).toBe("DISPATCHED")

      const held = await request("DELETE", `/v1/fleet-vehicles/${van.id}`, undefined, g.tokens.api)
      expect([held.status, held.json.error.code]).toEqual([409, "conflict"])
      expect(held.json.error.message).toContain(made.json.data.number)
      await post(`${base}/cancel`)
      expect((await request("DELETE", `/v1/fleet-vehicles/${van.id}`, undefined, g.tokens.api)).status).toBe(200)
      expect((await request("GET", base, undefined, g.tokens.api)).json.data.vehicle_id).toBe(van.id)
    })

    it("the cost comparison burns the route's vehicle's consumption, or the profile's when the vehicle has none", async () => {
      const g = await seedFixture(ctx.server)
      const post = (path: string, body?: unknown) => request("POST", path, body, g.tokens.api)
      expect((await request("PUT", "/v1/fleet-cost-profile", sampleFleetCostProfile, g.tokens.api)).status).toBe(200)
      const thirsty = (await post("/v1/fleet-vehicles", { plate: "B 50 TRK", fuel_type: "diesel", fuel_consumption_l_per_100km: 19 })).json.data
      const unknown = (await post("/v1/fleet-vehicles", { plate: "B 51 TRK", fuel_type: "diesel" })).json.data
      const fuelOf = async (vehicleId: string | null) => {
        const made = (await post("/v1/delivery-routes", sampleRoute({ vehicle_id: vehicleId }))).json.data
        const planned = (await post(`/v1/delivery-routes/${made.id}/optimize`)).json.data
        const comparison = (await request("GET", `/v1/delivery-routes/${made.id}/cost-comparison`, undefined, g.tokens.api)).json.data
        return { km: planned.total_distance_km as number, fuel: comparison.breakdown[0].amountMinor as number, co2: comparison.co2Grams }
      }
      const withThirsty = await fuelOf(thirsty.id)
      const withUnknown = await fuelOf(unknown.id)
      const without = await fuelOf(null)
      // FUEL = km × l/100 km ÷ 100 × 7.45 RON, in bani.
      expect(withThirsty.fuel).toBe(Math.round(withThirsty.km * 19 / 100 * 745))
      expect(withUnknown.fuel).toBe(Math.round(withUnknown.km * 9.5 / 100 * 745))
      expect(withUnknown).toEqual(without)
      expect(withThirsty.co2).toBe(Math.round(withThirsty.km * 19 / 100 * 3197))
    })
  })
}
