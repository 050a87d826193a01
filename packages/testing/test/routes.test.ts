import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { CostComparisons, Events, Fleet, Locations, Pagination, Routes, Tenancy, type Tenant } from "@opsplatform/core"
import { makeFixture, makeRouteFixture, MemoryCore, MemoryStore, sampleStops } from "@opsplatform/testing"
import { Optimizer } from "@opsplatform/core/routes/Optimizer"

const base = {
  name: "Morning run",
  route_date: "2026-03-02T07:00:00+02:00",
  start_latitude: 44.4912,
  start_longitude: 26.1718
}

const outboxEvents = Effect.map(MemoryStore, (store) =>
  [...store.table<{ organizationId: string; eventId: string; type: string; data: any }>("outbox_events").values()])

/** A registered vehicle of the tenant, with no capacities of its own (so routes keep the capacities they are given). */
const vehicle = (tenant: Tenant.Tenant, plate: string) =>
  Effect.flatMap(Fleet.Fleet, (fleet) => fleet.create(tenant, { plate, fuel_type: "diesel" })).pipe(
    Effect.map((v) => v.id),
    Effect.orDie
  )

const withDriver = Effect.gen(function*() {
  const f = yield* makeFixture()
  const tenancy = yield* Tenancy.Tenancy
  const driver = yield* tenancy.createUser({ email: `driver-${f.organizationId}@example.test`, name: "Dana Driver" })
  yield* tenancy.addMember(f.organizationId, driver.id, "driver")
  return { f, driverId: driver.id, vehicleId: yield* vehicle(f.live, "B 101 VAN") }
})

describe("Routes on memory storage", () => {
  layer(MemoryCore())((it) => {
    it.effect("creates a DRAFT with numbered stops, numbers routes per tenant, and reads it back", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const routes = yield* Routes.Routes
        const first = yield* routes.create(f.live, { ...base, stops: sampleStops(3) })
        const second = yield* routes.create(f.live, base)
        const sandbox = yield* routes.create(f.sandbox, base)
        assert.strictEqual(first.status, "DRAFT")
        assert.deepStrictEqual([first.number, second.number, sandbox.number], ["R-000001", "R-000002", "R-000001"])
        assert.deepStrictEqual(first.stops.map((s) => s.position), [1, 2, 3])
        assert.strictEqual(first.stop_count, 3)
        assert.strictEqual(first.route_date, "2026-03-02T05:00:00.000Z")
        assert.isTrue(first.round_trip)
        assert.deepStrictEqual(yield* routes.get(f.live, first.id), first)
        assert.strictEqual((yield* Effect.flip(routes.get(f.sandbox, first.id)))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(routes.get(f.live, "not-a-uuid")))._tag, "NotFound")
      }))

    it.effect("starts from a location of the tenant (coordinates copied) or explicit coordinates, never both", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const routes = yield* Routes.Routes
        const locations = yield* Locations.Locations
        const depot = yield* locations.create(f.live, { name: "Depot", latitude: 44.5, longitude: 26.2 })
        const bare = yield* locations.create(f.live, { name: "No coordinates" })
        const foreign = yield* locations.create(f.sandbox, { name: "Sandbox depot", latitude: 1, longitude: 1 })
        const { start_latitude: _, start_longitude: __, ...noCoordinates } = base
        const fromDepot = yield* routes.create(f.live, { ...noCoordinates, start_location_id: depot.id })
        assert.deepStrictEqual([fromDepot.start_location_id, fromDepot.start_latitude, fromDepot.start_longitude], [depot.id, 44.5, 26.2])
        const notFound = yield* Effect.flip(routes.create(f.live, { ...noCoordinates, start_location_id: foreign.id }))
        assert.strictEqual(notFound._tag, "NotFound")
        const both = yield* Effect.flip(routes.create(f.live, { ...base, start_location_id: depot.id }))
        assert.deepStrictEqual(both._tag === "ValidationFailed" && both.details.map((d) => d.field), ["start_location_id"])
        const none = yield* Effect.flip(routes.create(f.live, noCoordinates))
        assert.deepStrictEqual(none._tag === "ValidationFailed" && none.details.map((d) => d.field), ["start_location_id"])
        const half = yield* Effect.flip(routes.create(f.live, { ...noCoordinates, start_latitude: 44 }))
        assert.deepStrictEqual(half._tag === "ValidationFailed" && half.details.map((d) => d.field), ["start_longitude"])
        const noPoint = yield* Effect.flip(routes.create(f.live, { ...noCoordinates, start_location_id: bare.id }))
        assert.deepStrictEqual(noPoint._tag === "ValidationFailed" && noPoint.details, [
          { field: "start_location_id", issue: "the location has no latitude and longitude" }
        ])
        // Switching to coordinates unlinks the location.
        const moved = yield* routes.update(f.live, fromDepot.id, { start_latitude: 44.6, start_longitude: 26.3 })
        assert.deepStrictEqual([moved.start_location_id, moved.start_latitude], [null, 44.6])
      }))

    it.effect("takes only members of the organization as drivers", () =>
      Effect.gen(function*() {
        const { driverId, f } = yield* withDriver
        const routes = yield* Routes.Routes
        const tenancy = yield* Tenancy.Tenancy
        const route = yield* routes.create(f.live, { ...base, driver_id: driverId })
        assert.strictEqual(route.driver_id, driverId)
        const outsider = yield* tenancy.createUser({ email: `outsider-${f.organizationId}@example.test`, name: "Outsider" })
        const refused = yield* Effect.flip(routes.update(f.live, route.id, { driver_id: outsider.id }))
        assert.deepStrictEqual(refused._tag === "NotFound" && [refused.resource, refused.id], ["member", outsider.id])
      }))

    it.effect("refuses a stop window that ends before it starts, naming the stop", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const routes = yield* Routes.Routes
        const stops = sampleStops(3)
        stops[2] = { ...stops[2]!, window_start: "14:00", window_end: "13:00" }
        const refused = yield* Effect.flip(routes.create(f.live, { ...base, stops }))
        assert.deepStrictEqual(refused._tag === "ValidationFailed" && refused.details, [
          { field: "stops.2.window_end", issue: "must be later than window_start" }
        ])
      }))

    it.effect("adds, changes, removes and reorders stops while planning; a stop change voids the optimization", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const routes = yield* Routes.Routes
        const route = yield* routes.create(f.live, { ...base, stops: sampleStops(3) })
        const planned = yield* routes.optimize(f.live, route.id)
        assert.strictEqual(planned.status, "PLANNED")
        assert.isNotNull(planned.total_distance_km)
        const added = yield* routes.addStop(f.live, route.id, { label: "Late addition", latitude: 44.41, longitude: 26.05, parcels: 2 })
        assert.deepStrictEqual(added.stops.map((s) => s.position), [1, 2, 3, 4])
        assert.strictEqual(added.stops[3]!.label, "Late addition")
        assert.deepStrictEqual([added.status, added.total_distance_km, added.optimized_at, added.optimizer], ["PLANNED", null, null, null])
        const renamed = yield* routes.updateStop(f.live, route.id, added.stops[0]!.id, { label: "Renamed", notes: "Gate code 1234" })
        assert.strictEqual(renamed.stops[0]!.label, "Renamed")
        const reversed = [...renamed.stops].reverse().map((s) => s.id)
        const reordered = yield* routes.reorderStops(f.live, route.id, reversed)
        assert.deepStrictEqual(reordered.stops.map((s) => s.id), reversed)
        const incomplete = yield* Effect.flip(routes.reorderStops(f.live, route.id, reversed.slice(1)))
        assert.strictEqual(incomplete._tag, "ValidationFailed")
        const removed = yield* routes.removeStop(f.live, route.id, reversed[1]!)
        assert.deepStrictEqual(removed.stops.map((s) => s.id), [reversed[0], reversed[2], reversed[3]])
        assert.deepStrictEqual(removed.stops.map((s) => s.position), [1, 2, 3])
        assert.strictEqual((yield* Effect.flip(routes.removeStop(f.live, route.id, reversed[1]!)))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(routes.updateStop(f.live, route.id, "nope", { label: "x" })))._tag, "NotFound")
      }))

    it.effect("locks stops after dispatch and limits what a PATCH may change per status", () =>
      Effect.gen(function*() {
        const { driverId, f, vehicleId } = yield* withDriver
        const routes = yield* Routes.Routes
        const route = yield* routes.create(f.live, { ...base, driver_id: driverId, vehicle_id: vehicleId, stops: sampleStops(2) })
        yield* routes.optimize(f.live, route.id)
        yield* routes.dispatch(f.live, route.id)
        const stopChange = yield* Effect.flip(routes.addStop(f.live, route.id, { label: "x", latitude: 1, longitude: 1 }))
        assert.strictEqual(stopChange._tag, "Conflict")
        const moveStart = yield* Effect.flip(routes.update(f.live, route.id, { start_latitude: 1, start_longitude: 1 }))
        assert.strictEqual(moveStart._tag, "Conflict")
        // Dispatched: the vehicle may change (then dispatch again), and a PATCH that changes nothing is fine.
        const other = yield* vehicle(f.live, "B 102 VAN")
        const swapped = yield* routes.update(f.live, route.id, { vehicle_id: other, name: route.name })
        assert.strictEqual(swapped.vehicle_id, other)
        yield* routes.start(f.live, route.id)
        const rename = yield* Effect.flip(routes.update(f.live, route.id, { name: "Other" }))
        assert.strictEqual(rename._tag, "Conflict")
        const noted = yield* routes.update(f.live, route.id, { notes: "Traffic on DN1" })
        assert.strictEqual(noted.notes, "Traffic on DN1")
        yield* routes.complete(f.live, route.id)
        assert.strictEqual((yield* Effect.flip(routes.update(f.live, route.id, { notes: "late" })))._tag, "Conflict")
      }))

    it.effect("optimizes within capacity, refuses an overloaded vehicle with capacity_exceeded", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const routes = yield* Routes.Routes
        const stops = sampleStops(6) // 1+2+3+1+2+3 = 12 parcels
        const route = yield* routes.create(f.live, { ...base, capacity_parcels: 11, stops })
        const refused = yield* Effect.flip(routes.optimize(f.live, route.id))
        assert.deepStrictEqual(refused._tag === "Unprocessable" && refused.code, "capacity_exceeded")
        assert.include(refused.message, "12 parcels for a capacity of 11")
        yield* routes.update(f.live, route.id, { capacity_parcels: 12 })
        const planned = yield* routes.optimize(f.live, route.id)
        assert.strictEqual(planned.optimizer, "builtin:nearest-neighbour+2-opt")
        assert.isAbove(planned.total_distance_km!, 0)
        assert.isAbove(planned.total_duration_minutes!, 0)
        const empty = yield* routes.create(f.live, base)
        const noStops = yield* Effect.flip(routes.optimize(f.live, empty.id))
        assert.deepStrictEqual(noStops._tag === "Unprocessable" && noStops.code, "route_has_no_stops")
      }))

    it.effect("runs the lifecycle and names both states when a move is refused", () =>
      Effect.gen(function*() {
        const { driverId, f, vehicleId } = yield* withDriver
        const routes = yield* Routes.Routes
        const route = yield* routes.create(f.live, { ...base, stops: sampleStops(2) })
        const early = yield* Effect.flip(routes.dispatch(f.live, route.id))
        assert.deepStrictEqual(early._tag === "InvalidTransition" && [early.from, early.to], ["DRAFT", "DISPATCHED"])
        yield* routes.optimize(f.live, route.id)
        const noDriver = yield* Effect.flip(routes.dispatch(f.live, route.id))
        assert.deepStrictEqual(noDriver._tag === "Unprocessable" && noDriver.code, "driver_required")
        yield* routes.update(f.live, route.id, { driver_id: driverId })
        const noVehicle = yield* Effect.flip(routes.dispatch(f.live, route.id))
        assert.deepStrictEqual(noVehicle._tag === "Unprocessable" && noVehicle.code, "vehicle_required")
        yield* routes.update(f.live, route.id, { vehicle_id: vehicleId })
        yield* TestClock.adjust("1 minute")
        const dispatched = yield* routes.dispatch(f.live, route.id)
        assert.strictEqual(dispatched.dispatched_at, "1970-01-01T00:01:00.000Z")
        const started = yield* routes.start(f.live, route.id)
        assert.isNotNull(started.started_at)
        const cancel = yield* Effect.flip(routes.cancel(f.live, route.id))
        assert.deepStrictEqual(cancel._tag === "InvalidTransition" && cancel.message, "A delivery route cannot go from IN_PROGRESS to CANCELLED")
        const done = yield* routes.complete(f.live, route.id)
        assert.deepStrictEqual([done.status, done.completed_at !== null], ["COMPLETED", true])
        const other = yield* routes.create(f.live, base)
        const cancelled = yield* routes.cancel(f.live, other.id)
        assert.deepStrictEqual([cancelled.status, cancelled.cancelled_at !== null], ["CANCELLED", true])
      }))

    it.effect("dispatch publishes the spec's payload with one event per dispatch", () =>
      Effect.gen(function*() {
        const { driverId, f, vehicleId } = yield* withDriver
        const routes = yield* Routes.Routes
        const route = yield* routes.create(f.live, { ...base, driver_id: driverId, vehicle_id: vehicleId, stops: sampleStops(4) })
        yield* routes.optimize(f.live, route.id)
        const first = yield* routes.dispatch(f.live, route.id)
        yield* TestClock.adjust("5 minutes")
        const second = yield* routes.dispatch(f.live, route.id)
        const events = (yield* outboxEvents).filter((e) => e.organizationId === f.organizationId && e.type === "delivery_route.dispatched")
        assert.deepStrictEqual(events.map((e) => e.eventId), [
          Events.routeDispatchedEventId(route.id, 1),
          Events.routeDispatchedEventId(route.id, 2)
        ])
        assert.deepStrictEqual(events[0]!.data, {
          id: route.id,
          number: route.number,
          driver_id: driverId,
          vehicle_id: vehicleId,
          stop_count: 4,
          dispatched_at: first.dispatched_at
        })
        assert.strictEqual(events[1]!.data.dispatched_at, second.dispatched_at)
        assert.notStrictEqual(first.dispatched_at, second.dispatched_at)
      }))

    it.effect("lists newest first and filters route dates by the organization's calendar", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const routes = yield* Routes.Routes
        const tenancy = yield* Tenancy.Tenancy
        yield* tenancy.updateSettings(f.organizationId, { time_zone: "Europe/Bucharest" })
        // 2026-03-01 22:30 UTC is already March 2nd in Bucharest (UTC+2).
        const late = yield* routes.create(f.live, { ...base, route_date: "2026-03-01T22:30:00Z" })
        const early = yield* routes.create(f.live, { ...base, route_date: "2026-03-01T21:59:00Z" })
        const page = yield* Pagination.pageRequest({})
        const on = (date: string) => Effect.map(routes.list(f.live, { date_from: date, date_to: date }, page), (p) => p.items.map((r) => r.id))
        assert.deepStrictEqual(yield* on("2026-03-02"), [late.id])
        assert.deepStrictEqual(yield* on("2026-03-01"), [early.id])
        const all = yield* routes.list(f.live, {}, page)
        assert.deepStrictEqual(all.items.map((r) => r.id), [early.id, late.id])
        const backwards = yield* Effect.flip(routes.list(f.live, { date_from: "2026-03-02", date_to: "2026-03-01" }, page))
        assert.strictEqual(backwards._tag, "ValidationFailed")
      }))
  })
})

describe("Optimizer port", () => {
  const reversing = Layer.succeed(Optimizer, {
    optimize: (input) =>
      Effect.succeed({
        order: [...input.stops].reverse().map((s) => s.id),
        totalDistanceKm: 42.1234,
        totalDurationMinutes: 99.6,
        optimizer: "host:reverse"
      })
  })
  layer(MemoryCore().pipe(Layer.provide(reversing)))((it) => {
    it.effect("a host's engine replaces the built-in one", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const routes = yield* Routes.Routes
        const route = yield* routes.create(f.live, { ...base, stops: sampleStops(3) })
        const planned = yield* routes.optimize(f.live, route.id)
        assert.deepStrictEqual(planned.stops.map((s) => s.id), [...route.stops].reverse().map((s) => s.id))
        assert.deepStrictEqual([planned.optimizer, planned.total_distance_km, planned.total_duration_minutes], ["host:reverse", 42.123, 100])
      }))
  })
})

describe("Cost comparison on memory storage", () => {
  layer(MemoryCore())((it) => {
    it.effect("compares a route priced from the rate card; every stop is priced", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const route = yield* makeRouteFixture(f.live, { stops: 12 })
        const comparisons = yield* CostComparisons.CostComparisons
        const result = yield* comparisons.compare(f.live, route.id, "MARGINAL")
        assert.strictEqual(result.currency, "RON")
        assert.strictEqual(result.mode, "MARGINAL")
        assert.deepStrictEqual([result.pricedStops, result.unpricedStops, result.estimatedStops, result.senderMissing], [12, 0, 0, false])
        assert.strictEqual(result.breakdown.reduce((s, c) => s + c.amountMinor, 0), result.fleetMinor)
        const full = yield* comparisons.compare(f.live, route.id, "FULL")
        assert.isAbove(full.fleetMinor, result.fleetMinor)
      }))

    it.effect("a never-optimized route is measured in its current order; an optimized one by its totals", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const route = yield* makeRouteFixture(f.live, { stops: 15 })
        const comparisons = yield* CostComparisons.CostComparisons
        const routes = yield* Routes.Routes
        const before = yield* comparisons.compare(f.live, route.id, "MARGINAL")
        const planned = yield* routes.optimize(f.live, route.id)
        const after = yield* comparisons.compare(f.live, route.id, "MARGINAL")
        // The spiral's given order zig-zags; the optimized tour is shorter, so fuel costs less.
        assert.isBelow(after.breakdown[0]!.amountMinor, before.breakdown[0]!.amountMinor)
        // FUEL = km × 9.5/100 × 745, rounded half-even once.
        const km = planned.total_distance_km!
        assert.strictEqual(after.breakdown[0]!.amountMinor, Math.round(km * 9.5 / 100 * 745))
      }))

    it.effect("without a sender address couriers cannot quote: every stop is estimated from the rate card", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const route = yield* makeRouteFixture(f.live, { stops: 5, sender: null })
        const result = yield* (yield* CostComparisons.CostComparisons).compare(f.live, route.id, "MARGINAL")
        assert.deepStrictEqual(
          [result.senderMissing, result.estimatedStops, result.estimatedPercent, result.pricedStops],
          [true, 5, 100, 5]
        )
      }))

    it.effect("without a sender address or rate card nothing is priced: verdict FLEET, zero courier figures", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const route = yield* makeRouteFixture(f.live, { stops: 4, sender: null, rateCard: null })
        const result = yield* (yield* CostComparisons.CostComparisons).compare(f.live, route.id, "MARGINAL")
        assert.deepStrictEqual(
          [result.verdict, result.pricedStops, result.unpricedStops, result.courierProjectedMinor, result.savingMinor, result.breakEvenStops],
          ["FLEET", 0, 4, 0, 0, null]
        )
      }))

    it.effect("refuses a route without stops, without a profile, or with a rate card in another currency", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const comparisons = yield* CostComparisons.CostComparisons
        const routes = yield* Routes.Routes
        const noProfile = yield* makeRouteFixture(f.live, { stops: 2, profile: null })
        const missing = yield* Effect.flip(comparisons.compare(f.live, noProfile.id, "MARGINAL"))
        assert.deepStrictEqual(missing._tag === "Unprocessable" && missing.code, "fleet_cost_profile_missing")
        const empty = yield* routes.create(f.live, base)
        const noStops = yield* Effect.flip(comparisons.compare(f.live, empty.id, "MARGINAL"))
        assert.deepStrictEqual(noStops._tag === "Unprocessable" && noStops.code, "route_has_no_stops")
        const g = yield* makeFixture()
        const euros = yield* makeRouteFixture(g.live, {
          stops: 2,
          profile: { currency: "EUR", fuel_consumption_l_per_100km: 9, fuel_price_per_litre_minor: 160, driver_cost_per_hour_minor: 2500 }
        })
        const mismatch = yield* Effect.flip(comparisons.compare(g.live, euros.id, "MARGINAL"))
        assert.deepStrictEqual(mismatch._tag === "Unprocessable" && mismatch.code, "currency_mismatch")
        assert.strictEqual((yield* Effect.flip(comparisons.compare(f.sandbox, noProfile.id, "MARGINAL")))._tag, "NotFound")
      }))
  })
})
