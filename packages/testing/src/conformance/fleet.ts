import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import type { CoreLayers } from "@opsplatform/core"
import type { OutboxEvent } from "@opsplatform/core/events/catalog"
import { Outbox } from "@opsplatform/core/events/Outbox"
import { Fleet } from "@opsplatform/core/fleet/Fleet"
import { FleetRepo } from "@opsplatform/core/fleet/FleetRepo"
import type { FleetVehicle } from "@opsplatform/core/fleet/model"
import { RouteRepo } from "@opsplatform/core/routes/RouteRepo"
import { Routes } from "@opsplatform/core/routes/Routes"
import { RouteVehicleUsage } from "@opsplatform/core/routes/vehicleUsage"
import { Ids } from "@opsplatform/core/shared/Ids"
import { pageRequest } from "@opsplatform/core/shared/pagination"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { routeRecord, stopRecord } from "./routes.ts"
import { freshDriver, freshOrganization, timestamps, vehicleRecord } from "./support.ts"

type Storage = Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>
type CountEvents = (organizationId: string, eventId: string) => Effect.Effect<number, unknown, CoreLayers.StoragePorts | Ids>

/** The FleetRepo contract: every implementation must pass it unchanged. */
export const fleetRepoConformance = (name: string, storage: Storage) =>
  describe(`FleetRepo conformance: ${name}`, () => {
    layer(storage, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("stores, finds, updates and removes a vehicle as stored, decimals included", () =>
        Effect.gen(function*() {
          const repo = yield* FleetRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const [t0, t1] = timestamps(2)
          const v = vehicleRecord(yield* ids.uuid, "B123ABC", t0!)
          yield* repo.insert(org.live, v)
          assert.deepStrictEqual(yield* repo.find(org.live, v.id), Option.some(v))
          const changed = { ...v, make: null, capacity_kg: null, fuel_consumption_l_per_100km: 0.001, active: false, updated_at: t1! }
          yield* repo.update(org.live, changed)
          assert.deepStrictEqual(yield* repo.find(org.live, v.id, { forUpdate: true }), Option.some(changed))
          assert.isTrue(yield* repo.remove(org.live, v.id))
          assert.isTrue(Option.isNone(yield* repo.find(org.live, v.id)))
          assert.isFalse(yield* repo.remove(org.live, v.id))
        }))

      it.effect("never shows, changes or removes a vehicle of another organization or environment", () =>
        Effect.gen(function*() {
          const repo = yield* FleetRepo
          const ids = yield* Ids
          const a = yield* freshOrganization
          const b = yield* freshOrganization
          const v = vehicleRecord(yield* ids.uuid, "CJ12ABC", timestamps(1)[0]!)
          yield* repo.insert(a.live, v)
          for (const other of [a.sandbox, b.live]) {
            assert.isTrue(Option.isNone(yield* repo.find(other, v.id)))
            assert.isFalse(yield* repo.remove(other, v.id))
            assert.strictEqual((yield* repo.list(other, {}, yield* pageRequest({}))).meta.total, 0)
            yield* repo.update(other, { ...v, make: "Hijacked" })
          }
          assert.strictEqual(Option.getOrThrow(yield* repo.find(a.live, v.id)).make, "Ford")
        }))

      it.effect("holds one vehicle per plate in a tenant; the other environment and organizations may reuse it", () =>
        Effect.gen(function*() {
          const repo = yield* FleetRepo
          const ids = yield* Ids
          const a = yield* freshOrganization
          const b = yield* freshOrganization
          const [t0, t1] = timestamps(2)
          yield* repo.insert(a.live, vehicleRecord(yield* ids.uuid, "B123ABC", t0!))
          const twin = vehicleRecord(yield* ids.uuid, "B123ABC", t1!)
          assert.strictEqual((yield* Effect.flip(repo.insert(a.live, twin)))._tag, "Conflict")
          assert.isTrue(Option.isNone(yield* repo.find(a.live, twin.id)))
          yield* repo.insert(a.sandbox, twin)
          yield* repo.insert(b.live, vehicleRecord(yield* ids.uuid, "B123ABC", t1!))
          const other = vehicleRecord(yield* ids.uuid, "B124ABC", t1!)
          yield* repo.insert(a.live, other)
          const taken = yield* Effect.flip(repo.update(a.live, { ...other, plate: "B123ABC" }))
          assert.strictEqual(taken._tag, "Conflict")
          assert.strictEqual(Option.getOrThrow(yield* repo.find(a.live, other.id)).plate, "B124ABC")
        }))

      it.effect("lists newest first, filtered by active and fuel type, in pages", () =>
        Effect.gen(function*() {
          const repo = yield* FleetRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const at = timestamps(5)
          const made = [
            vehicleRecord(yield* ids.uuid, "B101AAA", at[0]!),
            vehicleRecord(yield* ids.uuid, "B102AAA", at[1]!, { fuel_type: "electric", fuel_consumption_l_per_100km: null }),
            vehicleRecord(yield* ids.uuid, "B103AAA", at[2]!, { active: false }),
            vehicleRecord(yield* ids.uuid, "B104AAA", at[3]!, { fuel_type: "electric", fuel_consumption_l_per_100km: null, active: false }),
            vehicleRecord(yield* ids.uuid, "B105AAA", at[4]!, { fuel_type: "lpg" })
          ]
          for (const v of made) yield* repo.insert(org.live, v)
          const plates = (p: { items: ReadonlyArray<FleetVehicle> }) => p.items.map((v) => v.plate)
          const page = yield* pageRequest({})
          assert.deepStrictEqual(plates(yield* repo.list(org.live, {}, page)), ["B105AAA", "B104AAA", "B103AAA", "B102AAA", "B101AAA"])
          assert.deepStrictEqual(plates(yield* repo.list(org.live, { active: false }, page)), ["B104AAA", "B103AAA"])
          assert.deepStrictEqual(plates(yield* repo.list(org.live, { fuel_type: "electric" }, page)), ["B104AAA", "B102AAA"])
          assert.deepStrictEqual(plates(yield* repo.list(org.live, { fuel_type: "electric", active: true }, page)), ["B102AAA"])
          const second = yield* repo.list(org.live, {}, yield* pageRequest({ perPage: 2, page: 2 }))
          assert.deepStrictEqual([plates(second), second.meta.total, second.meta.totalPages], [["B103AAA", "B102AAA"], 5, 3])
        }))
    })
  })

/** A plate whose events the wrapped outbox fails after storing, to prove a change and its event commit together. */
const FAIL_AFTER_PUBLISH = "B999ZZZ"

/**
 * The Fleet service, and the Routes service using it, on a storage: every
 * change's event is stored in the change's transaction (no event for an edit
 * that changes nothing), and routes take, default from and hold registered
 * vehicles of their own tenant.
 */
export const fleetServiceConformance = (name: string, storage: Storage, countEvents: CountEvents) => {
  /** Every event the services tried to publish, committed or not, with its tenant. */
  const attempted: Array<{ readonly tenant: Tenant; readonly event: OutboxEvent }> = []
  const recordingOutbox = Layer.effect(
    Outbox,
    Effect.map(Outbox, (outbox) =>
      Outbox.of({
        publish: (tenant, event) =>
          Effect.flatMap(outbox.publish(tenant, event), (stored) => {
            attempted.push({ tenant, event })
            return event.data.plate === FAIL_AFTER_PUBLISH ? Effect.die(new Error("failed after publishing")) : Effect.succeed(stored)
          })
      }))
  )
  const services = Layer.mergeAll(Fleet.layer.pipe(Layer.provide(RouteVehicleUsage)), Routes.layer).pipe(
    Layer.provide(recordingOutbox),
    Layer.provideMerge(storage)
  )
  const eventsOf = (organizationId: string) => attempted.filter((a) => a.tenant.organizationId === organizationId).map((a) => a.event)

  const route = (vehicleId: string | null, extra: Record<string, unknown> = {}) => ({
    name: "Morning run",
    route_date: "2026-03-02T07:00:00+02:00",
    start_latitude: 44.49,
    start_longitude: 26.17,
    vehicle_id: vehicleId,
    stops: [
      { label: "A", latitude: 44.43, longitude: 26.1, parcels: 2, weight_kg: 10 },
      { label: "B", latitude: 44.45, longitude: 26.08, parcels: 3, weight_kg: 15 }
    ],
    ...extra
  })

  return describe(`Fleet service conformance: ${name}`, () => {
    layer(services, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("publishes created, updated with the changed field names, and deleted once, each stored with its change", () =>
        Effect.gen(function*() {
          const fleet = yield* Fleet
          const org = yield* freshOrganization
          const made = yield* fleet.create(org.live, { plate: "b-123-abc", fuel_type: "diesel", capacity_kg: 900 })
          assert.strictEqual(made.plate, "B123ABC")
          // The same values, written another way: nothing changes, nothing is published.
          const same = yield* fleet.update(org.live, made.id, { plate: "B 123 ABC", capacity_kg: 900, active: true })
          assert.deepStrictEqual(same, made)
          const moved = yield* fleet.update(org.live, made.id, { plate: "B 124 ABC", capacity_kg: 1100, make: "Iveco", active: true })
          assert.deepStrictEqual([moved.plate, moved.capacity_kg, moved.make], ["B124ABC", 1100, "Iveco"])
          yield* fleet.remove(org.live, made.id)
          assert.strictEqual((yield* Effect.flip(fleet.remove(org.live, made.id)))._tag, "NotFound")
          const events = eventsOf(org.id)
          assert.deepStrictEqual(events.map((e) => [e.type, e.data]), [
            ["fleet_vehicle.created", { id: made.id, plate: "B123ABC" }],
            ["fleet_vehicle.updated", { id: made.id, plate: "B124ABC", changed_fields: ["plate", "make", "capacity_kg"] }],
            ["fleet_vehicle.deleted", { id: made.id, plate: "B124ABC" }]
          ])
          for (const e of events) {
            assert.match(e.eventId, /^evt_[0-9a-f]{32}$/)
            assert.strictEqual(yield* countEvents(org.id, e.eventId), 1)
          }
          assert.strictEqual(new Set(events.map((e) => e.eventId)).size, 3)
        }))

      it.effect("a change whose event fails after it was stored leaves neither the change nor the event", () =>
        Effect.gen(function*() {
          const fleet = yield* Fleet
          const org = yield* freshOrganization
          const exit = yield* Effect.exit(fleet.create(org.live, { plate: FAIL_AFTER_PUBLISH, fuel_type: "petrol" }))
          assert.strictEqual(exit._tag, "Failure")
          const [tried] = eventsOf(org.id)
          assert.strictEqual(tried?.type, "fleet_vehicle.created")
          assert.strictEqual(yield* countEvents(org.id, tried!.eventId), 0)
          assert.strictEqual((yield* fleet.list(org.live, {}, yield* pageRequest({}))).meta.total, 0)
          const kept = yield* fleet.create(org.live, { plate: "B 998 ZZZ", fuel_type: "petrol" })
          const renamed = yield* Effect.exit(fleet.update(org.live, kept.id, { plate: FAIL_AFTER_PUBLISH }))
          assert.strictEqual(renamed._tag, "Failure")
          assert.strictEqual((yield* fleet.get(org.live, kept.id)).plate, "B998ZZZ")
          const failedUpdate = eventsOf(org.id).at(-1)!
          assert.strictEqual(failedUpdate.type, "fleet_vehicle.updated")
          assert.strictEqual(yield* countEvents(org.id, failedUpdate.eventId), 0)
        }))

      it.effect("refuses a plate taken in the tenant and an electric vehicle's litres, publishing nothing", () =>
        Effect.gen(function*() {
          const fleet = yield* Fleet
          const org = yield* freshOrganization
          yield* fleet.create(org.live, { plate: "CJ 12 ABC", fuel_type: "diesel" })
          assert.strictEqual((yield* Effect.flip(fleet.create(org.live, { plate: "cj-12-abc", fuel_type: "lpg" })))._tag, "Conflict")
          const electric = yield* Effect.flip(fleet.create(org.live, { plate: "CJ 13 ABC", fuel_type: "electric", fuel_consumption_l_per_100km: 5 }))
          assert.deepStrictEqual(electric._tag === "ValidationFailed" && electric.details.map((d) => d.field), ["fuel_consumption_l_per_100km"])
          const notAPlate = yield* Effect.flip(fleet.create(org.live, { plate: "XX 12 ABC", fuel_type: "diesel" }))
          assert.deepStrictEqual(notAPlate._tag === "ValidationFailed" && notAPlate.details.map((d) => d.field), ["plate"])
          assert.strictEqual(eventsOf(org.id).length, 1)
        }))

      it.effect("a route takes only a vehicle of its tenant, and its capacities follow the vehicle unless the request sets them", () =>
        Effect.gen(function*() {
          const fleet = yield* Fleet
          const routes = yield* Routes
          const org = yield* freshOrganization
          const stranger = yield* freshOrganization
          const van = yield* fleet.create(org.live, { plate: "B 10 VAN", fuel_type: "diesel", capacity_kg: 1200, capacity_parcels: 80 })
          const truck = yield* fleet.create(org.live, { plate: "B 11 TRK", fuel_type: "diesel", capacity_kg: 5000 })
          const foreign = yield* fleet.create(stranger.live, { plate: "B 12 FRN", fuel_type: "diesel" })
          const sandboxVan = yield* fleet.create(org.sandbox, { plate: "B 10 VAN", fuel_type: "diesel" })
          for (const id of [foreign.id, sandboxVan.id, "6f1c2b9e-3d4a-4e5f-8a7b-1c2d3e4f5a6b"]) {
            const refused = yield* Effect.flip(routes.create(org.live, route(id)))
            assert.deepStrictEqual(refused._tag === "NotFound" && [refused.resource, refused.id], ["fleet vehicle", id])
          }
          const defaulted = yield* routes.create(org.live, route(van.id))
          assert.deepStrictEqual([defaulted.capacity_kg, defaulted.capacity_parcels], [1200, 80])
          const given = yield* routes.create(org.live, route(van.id, { capacity_kg: 500, capacity_parcels: null }))
          assert.deepStrictEqual([given.capacity_kg, given.capacity_parcels], [500, null])
          // A new vehicle brings its capacities (none recorded is none), unless the PATCH sets them.
          const swapped = yield* routes.update(org.live, defaulted.id, { vehicle_id: truck.id })
          assert.deepStrictEqual([swapped.vehicle_id, swapped.capacity_kg, swapped.capacity_parcels], [truck.id, 5000, null])
          const kept = yield* routes.update(org.live, given.id, { vehicle_id: truck.id, capacity_kg: 700 })
          assert.deepStrictEqual([kept.capacity_kg, kept.capacity_parcels], [700, null])
          const refused = yield* Effect.flip(routes.update(org.live, given.id, { vehicle_id: foreign.id }))
          assert.strictEqual(refused._tag, "NotFound")
          assert.strictEqual((yield* routes.get(org.live, given.id)).vehicle_id, truck.id)
        }))

      it.effect("dispatch refuses an inactive vehicle with 422 vehicle_inactive; a vehicle swap on a dispatched route brings its capacity", () =>
        Effect.gen(function*() {
          const fleet = yield* Fleet
          const routes = yield* Routes
          const org = yield* freshOrganization
          const driverId = yield* freshDriver(org.id)
          const van = yield* fleet.create(org.live, { plate: "B 20 VAN", fuel_type: "diesel", capacity_parcels: 10 })
          const small = yield* fleet.create(org.live, { plate: "B 21 VAN", fuel_type: "diesel", capacity_parcels: 4 })
          const made = yield* routes.create(org.live, route(van.id, { driver_id: driverId }))
          yield* routes.optimize(org.live, made.id)
          yield* fleet.update(org.live, van.id, { active: false })
          const inactive = yield* Effect.flip(routes.dispatch(org.live, made.id))
          assert.deepStrictEqual(inactive._tag === "Unprocessable" && [inactive.code, inactive.message], [
            "vehicle_inactive",
            "The vehicle B20VAN is inactive; activate it or give the route another vehicle"
          ])
          assert.strictEqual((yield* routes.get(org.live, made.id)).status, "PLANNED")
          yield* fleet.update(org.live, van.id, { active: true })
          assert.strictEqual((yield* routes.dispatch(org.live, made.id)).status, "DISPATCHED")
          const swapped = yield* routes.update(org.live, made.id, { vehicle_id: small.id })
          assert.strictEqual(swapped.capacity_parcels, 4)
          const over = yield* Effect.flip(routes.dispatch(org.live, made.id))
          assert.deepStrictEqual(over._tag === "Unprocessable" && over.code, "capacity_exceeded")
        }))

      it.effect("a route whose vehicle id predates the registry is refused at dispatch with 422 vehicle_not_registered", () =>
        Effect.gen(function*() {
          const routes = yield* Routes
          const repo = yield* RouteRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const [t0] = timestamps(1)
          const legacy = routeRecord(yield* ids.uuid, "R-000001", t0!, {
            status: "PLANNED",
            driver_id: yield* freshDriver(org.id),
            vehicle_id: yield* ids.uuid
          })
          yield* repo.insert(org.live, legacy)
          yield* repo.insertStops(org.live, legacy.id, [stopRecord(yield* ids.uuid, 1, t0!)])
          const refused = yield* Effect.flip(routes.dispatch(org.live, legacy.id))
          assert.deepStrictEqual(refused._tag === "Unprocessable" && refused.code, "vehicle_not_registered")
          // Its other fields still change; only a new vehicle must be registered.
          assert.strictEqual((yield* routes.update(org.live, legacy.id, { notes: "Call first" })).vehicle_id, legacy.vehicle_id)
        }))

      it.effect("a vehicle on a route that is not finished cannot be deleted; once the route is finished it can", () =>
        Effect.gen(function*() {
          const fleet = yield* Fleet
          const routes = yield* Routes
          const org = yield* freshOrganization
          const driverId = yield* freshDriver(org.id)
          const van = yield* fleet.create(org.live, { plate: "B 30 VAN", fuel_type: "diesel" })
          const first = yield* routes.create(org.live, route(van.id, { driver_id: driverId }))
          const second = yield* routes.create(org.live, route(van.id))
          const held = yield* Effect.flip(fleet.remove(org.live, van.id))
          assert.deepStrictEqual(held._tag === "Conflict" && held.message,
            `Vehicle B30VAN is on 2 routes not finished: ${first.number} (DRAFT), ${second.number} (DRAFT); ` +
              "complete or cancel them, or give them another vehicle, first")
          yield* routes.cancel(org.live, second.id)
          yield* routes.optimize(org.live, first.id)
          yield* routes.dispatch(org.live, first.id)
          yield* routes.start(org.live, first.id)
          assert.strictEqual((yield* Effect.flip(fleet.remove(org.live, van.id)))._tag, "Conflict")
          assert.isTrue(Option.isSome(yield* (yield* FleetRepo).find(org.live, van.id)))
          yield* routes.complete(org.live, first.id)
          yield* fleet.remove(org.live, van.id)
          // A finished route keeps the vehicle it was driven with.
          assert.strictEqual((yield* routes.get(org.live, first.id)).vehicle_id, van.id)
          assert.deepStrictEqual(eventsOf(org.id).filter((e) => e.type === "fleet_vehicle.deleted").map((e) => e.data.id), [van.id])
        }))

      it.effect("deleting a vehicle while it is given to routes never leaves an unfinished route on a deleted vehicle", () =>
        Effect.gen(function*() {
          const fleet = yield* Fleet
          const routes = yield* Routes
          const repo = yield* FleetRepo
          const org = yield* freshOrganization
          for (let i = 0; i < 6; i++) {
            const van = yield* fleet.create(org.live, { plate: `B 4${i} RCE`, fuel_type: "diesel" })
            const [removed, assigned] = yield* Effect.all([
              Effect.exit(fleet.remove(org.live, van.id)),
              Effect.exit(routes.create(org.live, route(van.id)))
            ], { concurrency: "unbounded" })
            // Exactly one wins: the route on a live vehicle, or the deletion with the route refused.
            assert.notStrictEqual(removed._tag, assigned._tag)
            const exists = Option.isSome(yield* repo.find(org.live, van.id))
            assert.strictEqual(exists, assigned._tag === "Success")
          }
        }))
    })
  })
}

/** Every suite of the fleet area against one storage implementation. */
export const fleetConformance = (name: string, storage: Storage, countEvents: CountEvents) => {
  fleetRepoConformance(name, storage)
  fleetServiceConformance(name, storage, countEvents)
}
