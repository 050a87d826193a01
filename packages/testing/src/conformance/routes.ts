import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import type { CoreLayers } from "@opsplatform/core"
import { routeDispatchedEventId } from "@opsplatform/core/events/catalog"
import { type RouteRecord, RouteId, type Stop, StopId } from "@opsplatform/core/routes/model"
import { RouteRepo } from "@opsplatform/core/routes/RouteRepo"
import { Routes } from "@opsplatform/core/routes/Routes"
import { Ids } from "@opsplatform/core/shared/Ids"
import { pageRequest } from "@opsplatform/core/shared/pagination"
import { Transactor } from "@opsplatform/core/shared/Transactor"
import { nowIso } from "@opsplatform/core/shared/time"
import { FleetRepo } from "@opsplatform/core/fleet/FleetRepo"
import { freshDriver, freshOrganization, timestamps, vehicleRecord } from "./support.ts"

type Storage = Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>
type CountEvents = (organizationId: string, eventId: string) => Effect.Effect<number, unknown, CoreLayers.StoragePorts | Ids>

export const routeRecord = (id: string, number: string, at: string, overrides: Partial<RouteRecord> = {}): RouteRecord => ({
  id: RouteId.make(id),
  number,
  name: `Route ${number}`,
  status: "DRAFT",
  route_date: "2026-03-02T06:30:00.000Z",
  start_location_id: null,
  start_address: { line1: "Str. Depozitului 1", line2: null, postal_code: "077190", city: "Voluntari", region: null, country: "RO" },
  start_latitude: 44.4912,
  start_longitude: 26.1718,
  round_trip: true,
  vehicle_id: null,
  driver_id: null,
  capacity_kg: 1250.5,
  capacity_parcels: 120,
  total_distance_km: null,
  total_duration_minutes: null,
  optimized_at: null,
  optimizer: null,
  dispatched_at: null,
  started_at: null,
  completed_at: null,
  cancelled_at: null,
  gate_visit_id: null,
  notes: null,
  dispatch_count: 0,
  created_at: at,
  updated_at: at,
  ...overrides
})

export const stopRecord = (id: string, position: number, at: string, overrides: Partial<Stop> = {}): Stop => ({
  id: StopId.make(id),
  position,
  label: `Stop ${position}`,
  address: null,
  latitude: 44.43 + position / 1000,
  longitude: 26.1 + position / 1000,
  parcels: 2,
  weight_kg: 3.125,
  service_minutes: 5,
  window_start: "09:00",
  window_end: null,
  notes: null,
  created_at: at,
  updated_at: at,
  ...overrides
})

/** The RouteRepo contract: every implementation must pass it unchanged. */
export const routeRepoConformance = (name: string, storage: Storage) =>
  describe(`RouteRepo conformance: ${name}`, () => {
    layer(storage, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("stores a route with its stops and gives them back as stored, with the stop count", () =>
        Effect.gen(function*() {
          const repo = yield* RouteRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const [t0, t1] = timestamps(2)
          const route = routeRecord(yield* ids.uuid, "R-000001", t0!, { notes: "Back door", driver_id: yield* ids.uuid })
          const stops = [
            stopRecord(yield* ids.uuid, 1, t0!, {
              address: { line1: "Bd. Unirii 10", line2: "Ap. 3", postal_code: null, city: "București", region: null, country: "RO" }
            }),
            stopRecord(yield* ids.uuid, 2, t0!, { weight_kg: 0, window_start: null, notes: "Ring twice" })
          ]
          yield* repo.insert(org.live, route)
          yield* repo.insertStops(org.live, route.id, stops)
          assert.deepStrictEqual(yield* repo.find(org.live, route.id), Option.some({ ...route, stop_count: 2 }))
          assert.deepStrictEqual(yield* repo.stops(org.live, route.id), stops)
          const planned = {
            ...route,
            status: "PLANNED" as const,
            total_distance_km: 18.437,
            total_duration_minutes: 52,
            optimized_at: t1!,
            optimizer: "builtin",
            updated_at: t1!
          }
          yield* repo.update(org.live, planned)
          assert.deepStrictEqual(yield* repo.lock(org.live, route.id), Option.some({ ...planned, stop_count: 2 }))
        }))

      it.effect("never shows a route or its stops to another organization or environment", () =>
        Effect.gen(function*() {
          const repo = yield* RouteRepo
          const ids = yield* Ids
          const a = yield* freshOrganization
          const b = yield* freshOrganization
          const [t0] = timestamps(1)
          const route = routeRecord(yield* ids.uuid, "R-000001", t0!)
          const stop = stopRecord(yield* ids.uuid, 1, t0!)
          yield* repo.insert(a.live, route)
          yield* repo.insertStops(a.live, route.id, [stop])
          for (const other of [a.sandbox, b.live]) {
            assert.isTrue(Option.isNone(yield* repo.find(other, route.id)))
            assert.isTrue(Option.isNone(yield* repo.lock(other, route.id)))
            assert.deepStrictEqual(yield* repo.stops(other, route.id), [])
            assert.isFalse(yield* repo.removeStop(other, route.id, stop.id))
            assert.strictEqual((yield* repo.list(other, {}, "UTC", yield* pageRequest({}))).meta.total, 0)
            yield* repo.update(other, { ...route, name: "Hijacked" })
            yield* repo.updateStop(other, route.id, { ...stop, label: "Hijacked" })
          }
          assert.strictEqual(Option.getOrThrow(yield* repo.find(a.live, route.id)).name, route.name)
          assert.strictEqual((yield* repo.stops(a.live, route.id))[0]!.label, stop.label)
        }))

      it.effect("numbers routes 1, 2, 3 per tenant, and a rolled-back number is given again", () =>
        Effect.gen(function*() {
          const repo = yield* RouteRepo
          const tx = yield* Transactor
          const org = yield* freshOrganization
          assert.strictEqual(yield* repo.nextNumber(org.live), 1)
          assert.strictEqual(yield* repo.nextNumber(org.live), 2)
          assert.strictEqual(yield* repo.nextNumber(org.sandbox), 1)
          const failed = yield* tx.withTransaction(Effect.andThen(repo.nextNumber(org.live), Effect.fail("boom" as const))).pipe(
            Effect.flip
          )
          assert.strictEqual(failed, "boom")
          assert.strictEqual(yield* repo.nextNumber(org.live), 3)
        }))

      it.effect("keeps positions dense: removing closes the gap, reordering permutes", () =>
        Effect.gen(function*() {
          const repo = yield* RouteRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const [t0, t1] = timestamps(2)
          const route = routeRecord(yield* ids.uuid, "R-000001", t0!)
          const stops: Array<Stop> = []
          for (let i = 1; i <= 4; i++) stops.push(stopRecord(yield* ids.uuid, i, t0!))
          yield* repo.insert(org.live, route)
          yield* repo.insertStops(org.live, route.id, stops)
          assert.isTrue(yield* repo.removeStop(org.live, route.id, stops[1]!.id))
          assert.isFalse(yield* repo.removeStop(org.live, route.id, stops[1]!.id))
          const left = yield* repo.stops(org.live, route.id)
          assert.deepStrictEqual(left.map((s) => [s.id, s.position]), [[stops[0]!.id, 1], [stops[2]!.id, 2], [stops[3]!.id, 3]])
          yield* repo.setStopOrder(org.live, route.id, [stops[3]!.id, stops[2]!.id, stops[0]!.id], t1!)
          const reordered = yield* repo.stops(org.live, route.id)
          assert.deepStrictEqual(reordered.map((s) => s.id), [stops[3]!.id, stops[2]!.id, stops[0]!.id])
          assert.deepStrictEqual(reordered.map((s) => s.position), [1, 2, 3])
          // Only the stops that moved were touched: the middle one kept its place.
          assert.deepStrictEqual(reordered.map((s) => s.updated_at), [t1!, t0!, t1!])
          const edited = { ...reordered[1]!, label: "Renamed", parcels: 7, weight_kg: 12.5, window_end: "17:30", updated_at: t1! }
          yield* repo.updateStop(org.live, route.id, edited)
          assert.deepStrictEqual((yield* repo.stops(org.live, route.id))[1], edited)
          assert.strictEqual(Option.getOrThrow(yield* repo.find(org.live, route.id)).stop_count, 3)
        }))

      it.effect("finds a vehicle's routes that are not finished, oldest first, in the tenant only", () =>
        Effect.gen(function*() {
          const repo = yield* RouteRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const vehicleId = yield* ids.uuid
          const at = timestamps(6)
          const statuses = ["DRAFT", "COMPLETED", "DISPATCHED", "CANCELLED", "IN_PROGRESS"] as const
          const rows = []
          for (const [i, status] of statuses.entries()) {
            rows.push(routeRecord(yield* ids.uuid, `R-00000${i + 1}`, at[i]!, { vehicle_id: vehicleId, status }))
          }
          rows.push(routeRecord(yield* ids.uuid, "R-000006", at[5]!, { vehicle_id: yield* ids.uuid }))
          for (const r of rows) yield* repo.insert(org.live, r)
          const open = yield* repo.unfinishedWithVehicle(org.live, vehicleId)
          assert.deepStrictEqual(open.map((r) => [r.number, r.status]), [["R-000001", "DRAFT"], ["R-000003", "DISPATCHED"], [
            "R-000005",
            "IN_PROGRESS"
          ]])
          assert.deepStrictEqual(open[0], rows[0])
          assert.deepStrictEqual(yield* repo.unfinishedWithVehicle(org.sandbox, vehicleId), [])
        }))

      it.effect("lists newest first, filtered by status and by days of route_date in the organization's time zone", () =>
        Effect.gen(function*() {
          const repo = yield* RouteRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const at = timestamps(4)
          const rows = [
            routeRecord(yield* ids.uuid, "R-000001", at[0]!, { route_date: "2026-02-28T23:59:59.999Z" }),
            routeRecord(yield* ids.uuid, "R-000002", at[1]!, { route_date: "2026-03-01T00:00:00.000Z", status: "PLANNED" }),
            routeRecord(yield* ids.uuid, "R-000003", at[2]!, { route_date: "2026-03-01T23:59:59.999Z" }),
            routeRecord(yield* ids.uuid, "R-000004", at[3]!, { route_date: "2026-03-02T00:00:00.000Z" })
          ]
          for (const r of rows) yield* repo.insert(org.live, r)
          yield* repo.insertStops(org.live, rows[2]!.id, [stopRecord(yield* ids.uuid, 1, at[2]!)])
          const page = yield* pageRequest({})
          const all = yield* repo.list(org.live, {}, "UTC", page)
          assert.deepStrictEqual(all.items.map((r) => r.number), ["R-000004", "R-000003", "R-000002", "R-000001"])
          assert.deepStrictEqual(all.items.map((r) => r.stop_count), [0, 1, 0, 0])
          const day = yield* repo.list(org.live, { date_from: "2026-03-01", date_to: "2026-03-01" }, "UTC", page)
          assert.deepStrictEqual(day.items.map((r) => r.number), ["R-000003", "R-000002"])
          assert.strictEqual(day.meta.total, 2)
          // The same day in Bucharest (UTC+2 in March) starts and ends two hours earlier.
          const bucharest = yield* repo.list(org.live, { date_from: "2026-03-01", date_to: "2026-03-01" }, "Europe/Bucharest", page)
          assert.deepStrictEqual(bucharest.items.map((r) => r.number), ["R-000002", "R-000001"])
          const after = yield* repo.list(org.live, { date_from: "2026-03-02" }, "UTC", page)
          assert.deepStrictEqual(after.items.map((r) => r.number), ["R-000004"])
          const planned = yield* repo.list(org.live, { status: "PLANNED" }, "UTC", page)
          assert.deepStrictEqual(planned.items.map((r) => r.number), ["R-000002"])
          const paged = yield* repo.list(org.live, {}, "UTC", yield* pageRequest({ perPage: 3, page: 2 }))
          assert.deepStrictEqual(paged.items.map((r) => r.number), ["R-000001"])
        }))
    })
  })

/**
 * The Routes service on a storage: the dispatch event is written in the
 * dispatch's transaction and leaves with it when the dispatch fails.
 */
export const routesServiceConformance = (name: string, storage: Storage, countEvents: CountEvents) => {
  // Storage whose route update fails for routes noted "fail after publish": the
  // dispatch has already published its event when the update runs.
  const failingUpdates = Layer.effect(
    RouteRepo,
    Effect.map(RouteRepo, (repo) =>
      RouteRepo.of({
        ...repo,
        update: (tenant, route) =>
          route.notes === "fail after publish" && route.status === "DISPATCHED"
            ? Effect.die(new Error("storage failed after the event was published"))
            : repo.update(tenant, route)
      }))
  )
  const services = Routes.layer.pipe(Layer.provide(failingUpdates), Layer.provideMerge(storage))

  return describe(`Routes service conformance: ${name}`, () => {
    layer(services, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      const setup = Effect.gen(function*() {
        const ids = yield* Ids
        const org = yield* freshOrganization
        const driverId = yield* freshDriver(org.id)
        // Routes take only vehicles of the registry (decided: docs/decisions.md, "Fleet vehicles and court cases").
        const vehicle = vehicleRecord(yield* ids.uuid, "B100RUN", yield* nowIso, { capacity_kg: null, capacity_parcels: null })
        yield* Effect.orDie((yield* FleetRepo).insert(org.live, vehicle))
        return { org, driverId, vehicleId: vehicle.id }
      })
      const plannedRoute = (notes: string | null) =>
        Effect.gen(function*() {
          const routes = yield* Routes
          const { driverId, org, vehicleId } = yield* setup
          const route = yield* routes.create(org.live, {
            name: "Morning run",
            route_date: "2026-03-02T07:00:00+02:00",
            start_latitude: 44.49,
            start_longitude: 26.17,
            driver_id: driverId,
            vehicle_id: vehicleId,
            notes,
            stops: [
              { label: "A", latitude: 44.43, longitude: 26.1 },
              { label: "B", latitude: 44.45, longitude: 26.08, parcels: 3 }
            ]
          })
          yield* routes.optimize(org.live, route.id)
          return { org, route, driverId, vehicleId }
        })

      it.effect("dispatch writes delivery_route.dispatched with the spec's payload in its transaction; a re-dispatch is a new event", () =>
        Effect.gen(function*() {
          const routes = yield* Routes
          const { driverId, org, route, vehicleId } = yield* plannedRoute(null)
          const dispatched = yield* routes.dispatch(org.live, route.id)
          assert.strictEqual(dispatched.status, "DISPATCHED")
          assert.strictEqual(dispatched.dispatch_count, 1)
          const first = routeDispatchedEventId(route.id, 1)
          assert.strictEqual(yield* countEvents(org.id, first), 1)
          assert.deepStrictEqual(
            { driver_id: driverId, vehicle_id: vehicleId, number: route.number, stop_count: 2 },
            { driver_id: dispatched.driver_id, vehicle_id: dispatched.vehicle_id, number: dispatched.number, stop_count: dispatched.stop_count }
          )
          const again = yield* routes.dispatch(org.live, route.id)
          assert.strictEqual(again.dispatch_count, 2)
          assert.strictEqual(yield* countEvents(org.id, routeDispatchedEventId(route.id, 2)), 1)
          assert.strictEqual(yield* countEvents(org.id, first), 1)
        }))

      it.effect("a dispatch that fails after publishing leaves no event and the route as it was", () =>
        Effect.gen(function*() {
          const routes = yield* Routes
          const { org, route } = yield* plannedRoute("fail after publish")
          const exit = yield* Effect.exit(routes.dispatch(org.live, route.id))
          assert.strictEqual(exit._tag, "Failure")
          assert.strictEqual(yield* countEvents(org.id, routeDispatchedEventId(route.id, 1)), 0)
          const after = yield* routes.get(org.live, route.id)
          assert.strictEqual(after.status, "PLANNED")
          assert.strictEqual(after.dispatch_count, 0)
          assert.isNull(after.dispatched_at)
        }))
    })
  })
}

/** Every suite of the routes area against one storage implementation. */
export const routesConformance = (name: string, storage: Storage, countEvents: CountEvents) => {
  routeRepoConformance(name, storage)
  routesServiceConformance(name, storage, countEvents)
}
