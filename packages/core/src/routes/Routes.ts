import { Context, DateTime, Effect, Layer, Option } from "effect"
import type { Outbox } from "../events/Outbox.ts"
import { FleetRepo } from "../fleet/FleetRepo.ts"
import type { FleetVehicle } from "../fleet/model.ts"
import { LocationRepo } from "../locations/LocationRepo.ts"
import { changedKeys } from "../shared/changes.ts"
import { Conflict, type InvalidTransition, NotFound, type Unprocessable, ValidationFailed } from "../shared/errors.ts"
import { Ids, newId } from "../shared/Ids.ts"
import { findOr404 } from "../shared/lookup.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import type { Tenant } from "../shared/tenant.ts"
import { nowIso } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { TenancyRepo } from "../tenancy/TenancyRepo.ts"
import { clearOptimization, recordOf, RouteAccess } from "./access.ts"
import { RouteLifecycle } from "./lifecycle.ts"
import {
  type DeliveryRoute,
  type DeliveryRouteWithStops,
  normalizeAddress,
  type RouteCreate,
  RouteId,
  type RouteFilter,
  type RouteRecord,
  type RouteUpdate,
  type Stop,
  type StopCreate,
  type StopUpdate
} from "./model.ts"
import { RouteRepo } from "./RouteRepo.ts"
import { editableRouteFields, formatRouteNumber, geometryFields } from "./rules.ts"
import { newStop, RouteStops, windowIssues } from "./stops.ts"

type Detail = DeliveryRouteWithStops
type Issue = { field: string; issue: string }

/** An instant as the API reports it: UTC, millisecond precision. */
const normalizeInstant = (s: string): string => DateTime.formatIso(DateTime.makeUnsafe(s))


/**
 * A route's capacities follow the vehicle it is given, unless the same
 * request sets them (decided: docs/decisions.md, "Fleet vehicles and court
 * cases"): a capacity left out takes the vehicle's, even when the vehicle
 * has none recorded (then the route has none either).
 */
const capacitiesFrom = (
  vehicle: FleetVehicle,
  given: Pick<RouteUpdate, "capacity_kg" | "capacity_parcels">,
  otherwise: Pick<RouteRecord, "capacity_kg" | "capacity_parcels">
): Pick<RouteRecord, "capacity_kg" | "capacity_parcels"> => ({
  capacity_kg: given.capacity_kg === undefined ? vehicle.capacity_kg : otherwise.capacity_kg,
  capacity_parcels: given.capacity_parcels === undefined ? vehicle.capacity_parcels : otherwise.capacity_parcels
})

/**
 * Delivery routes: planning (stops, optimization), the lifecycle, and the
 * `delivery_route.dispatched` event, written to the outbox in the dispatch's
 * own transaction. The stops are `RouteStops` (stops.ts), the lifecycle
 * `RouteLifecycle` (lifecycle.ts); this file creates, reads and edits routes.
 */
export class Routes extends Context.Service<Routes, {
  readonly create: (tenant: Tenant, input: RouteCreate) => Effect.Effect<Detail, NotFound | ValidationFailed>
  readonly get: (tenant: Tenant, id: string) => Effect.Effect<Detail, NotFound>
  readonly list: (tenant: Tenant, filter: RouteFilter, page: PageRequest) => Effect.Effect<Page<DeliveryRoute>, ValidationFailed>
  readonly update: (tenant: Tenant, id: string, patch: RouteUpdate) => Effect.Effect<Detail, NotFound | ValidationFailed | Conflict>
  readonly addStop: (tenant: Tenant, id: string, input: StopCreate) => Effect.Effect<Detail, NotFound | ValidationFailed | Conflict | Unprocessable>
  readonly updateStop: (tenant: Tenant, id: string, stopId: string, patch: StopUpdate) => Effect.Effect<Detail, NotFound | ValidationFailed | Conflict>
  readonly removeStop: (tenant: Tenant, id: string, stopId: string) => Effect.Effect<Detail, NotFound | Conflict>
  readonly reorderStops: (tenant: Tenant, id: string, stopIds: ReadonlyArray<string>) => Effect.Effect<Detail, NotFound | ValidationFailed | Conflict>
  readonly optimize: (tenant: Tenant, id: string) => Effect.Effect<Detail, NotFound | InvalidTransition | Unprocessable>
  readonly dispatch: (tenant: Tenant, id: string) => Effect.Effect<Detail, NotFound | InvalidTransition | Unprocessable>
  readonly start: (tenant: Tenant, id: string) => Effect.Effect<Detail, NotFound | InvalidTransition>
  readonly complete: (tenant: Tenant, id: string) => Effect.Effect<Detail, NotFound | InvalidTransition>
  readonly cancel: (tenant: Tenant, id: string) => Effect.Effect<Detail, NotFound | InvalidTransition>
}>()("@opsplatform/core/routes/Routes") {
  static readonly layer: Layer.Layer<
    Routes,
    never,
    RouteRepo | LocationRepo | FleetRepo | TenancyRepo | Outbox | Ids | Transactor
  > = Layer.effect(
    Routes,
    Effect.gen(function*() {
      const { found, repo, reread, withStops } = yield* RouteAccess
      const locations = yield* LocationRepo
      const fleet = yield* FleetRepo
      const tenancy = yield* TenancyRepo
      const ids = yield* Ids
      const tx = yield* Transactor

      const checkDriver = (tenant: Tenant, driverId: string | null | undefined) =>
        driverId === null || driverId === undefined
          ? Effect.void
          : Effect.flatMap(tenancy.findMember(tenant.organizationId, driverId), (member) =>
            Option.isNone(member) ? Effect.fail(new NotFound({ resource: "member", id: driverId })) : Effect.void)

      /**
       * The tenant's vehicle, held until the transaction ends: deleting it
       * takes the same lock, so a vehicle is never given to a route while it
       * is being deleted. Unknown and foreign ids are 404.
       */
      const vehicleOf = (tenant: Tenant, vehicleId: string) =>
        findOr404("fleet vehicle", vehicleId, (id) => fleet.find(tenant, id, { forUpdate: true }))

      const locationStart = (tenant: Tenant, locationId: string) =>
        Effect.gen(function*() {
          const found = yield* locations.find(tenant, locationId)
          if (Option.isNone(found)) return yield* new NotFound({ resource: "location", id: locationId })
          const { latitude, longitude } = found.value
          if (latitude === null || longitude === null) {
            return yield* ValidationFailed.field("start_location_id", "the location has no latitude and longitude")
          }
          return { latitude, longitude }
        })

      /**
       * Where the route starts after `input`: a location (its coordinates are
       * copied) or explicit coordinates, never both; a route always has one.
       */
      const resolveStart = (
        tenant: Tenant,
        current: RouteRecord | undefined,
        input: Pick<RouteUpdate, "start_location_id" | "start_address" | "start_latitude" | "start_longitude">
      ) =>
        Effect.gen(function*() {
          const issues: Array<Issue> = []
          const latGiven = input.start_latitude !== undefined
          const lngGiven = input.start_longitude !== undefined
          if (input.start_latitude === null) issues.push({ field: "start_latitude", issue: "a route always has start coordinates" })
          if (input.start_longitude === null) issues.push({ field: "start_longitude", issue: "a route always has start coordinates" })
          if (latGiven !== lngGiven) {
            issues.push({ field: latGiven ? "start_longitude" : "start_latitude", issue: "start_latitude and start_longitude go together" })
          }
          const location = input.start_location_id
          if (typeof location === "string" && (latGiven || lngGiven)) {
            issues.push({ field: "start_location_id", issue: "send either start_location_id or start_latitude and start_longitude, not both" })
          }
          if (current === undefined && typeof location !== "string" && !latGiven && !lngGiven) {
            issues.push({ field: "start_location_id", issue: "a route needs a start: start_location_id, or start_latitude and start_longitude" })
          }
          if (issues.length > 0) return yield* new ValidationFailed({ details: issues })
          const address = input.start_address === undefined
            ? current?.start_address ?? null
            : input.start_address === null
            ? null
            : normalizeAddress(input.start_address)
          if (typeof location === "string") {
            const point = yield* locationStart(tenant, location)
            return { start_location_id: location, start_address: address, start_latitude: point.latitude, start_longitude: point.longitude }
          }
          if (latGiven && lngGiven) {
            return {
              start_location_id: null,
              start_address: address,
              start_latitude: input.start_latitude!,
              start_longitude: input.start_longitude!
            }
          }
          return {
            start_location_id: location === null ? null : current!.start_location_id,
            start_address: address,
            start_latitude: current!.start_latitude,
            start_longitude: current!.start_longitude
          }
        })

      return Routes.of({
        create: Effect.fn("Routes.create")(function*(tenant, input) {
          const stops = input.stops ?? []
          const issues = stops.flatMap((s, i) => windowIssues(`stops.${i}.`, { window_start: s.window_start ?? null, window_end: s.window_end ?? null }))
          if (issues.length > 0) return yield* new ValidationFailed({ details: issues })
          const start = yield* resolveStart(tenant, undefined, input)
          yield* checkDriver(tenant, input.driver_id)
          return yield* tx.withTransaction(Effect.gen(function*() {
            const vehicle = typeof input.vehicle_id === "string" ? yield* vehicleOf(tenant, input.vehicle_id) : undefined
            const given = { capacity_kg: input.capacity_kg ?? null, capacity_parcels: input.capacity_parcels ?? null }
            const at = yield* nowIso
            const route: RouteRecord = {
              id: yield* newId(ids, RouteId),
              number: formatRouteNumber(yield* repo.nextNumber(tenant)),
              name: input.name.trim(),
              status: "DRAFT",
              route_date: normalizeInstant(input.route_date),
              ...start,
              round_trip: input.round_trip ?? true,
              vehicle_id: input.vehicle_id ?? null,
              driver_id: input.driver_id ?? null,
              ...(vehicle === undefined ? given : capacitiesFrom(vehicle, input, given)),
              total_distance_km: null,
              total_duration_minutes: null,
              optimized_at: null,
              optimizer: null,
              dispatched_at: null,
              started_at: null,
              completed_at: null,
              cancelled_at: null,
              gate_visit_id: null,
              notes: input.notes ?? null,
              dispatch_count: 0,
              created_at: at,
              updated_at: at
            }
            yield* repo.insert(tenant, route)
            const made: Array<Stop> = []
            for (const [i, s] of stops.entries()) made.push(yield* newStop(ids, s, i + 1, at))
            yield* repo.insertStops(tenant, route.id, made)
            return yield* reread(tenant, route.id)
          }))
        }),

        get: (tenant, id) => Effect.flatMap(found(tenant, id, false), (r) => withStops(tenant, r)),

        list: Effect.fn("Routes.list")(function*(tenant, filter, page) {
          if (filter.date_from !== undefined && filter.date_to !== undefined && filter.date_from > filter.date_to) {
            return yield* ValidationFailed.field("date_to", "must not be before date_from")
          }
          // The organization's time zone matters only to a date filter: without one, no read.
          const zone = filter.date_from === undefined && filter.date_to === undefined
            ? "UTC"
            : Option.match(yield* tenancy.findOrganization(tenant.organizationId), { onNone: () => "UTC", onSome: (o) => o.time_zone })
          return yield* repo.list(tenant, filter, zone, page)
        }),

        update: Effect.fn("Routes.update")(function*(tenant, id, patch) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            const route = yield* found(tenant, id, true)
            const current = recordOf(route)
            const start = yield* resolveStart(tenant, current, patch)
            const next: RouteRecord = {
              ...current,
              ...start,
              name: patch.name === undefined ? current.name : patch.name.trim(),
              route_date: patch.route_date === undefined ? current.route_date : normalizeInstant(patch.route_date),
              round_trip: patch.round_trip ?? current.round_trip,
              vehicle_id: patch.vehicle_id === undefined ? current.vehicle_id : patch.vehicle_id,
              driver_id: patch.driver_id === undefined ? current.driver_id : patch.driver_id,
              capacity_kg: patch.capacity_kg === undefined ? current.capacity_kg : patch.capacity_kg,
              capacity_parcels: patch.capacity_parcels === undefined ? current.capacity_parcels : patch.capacity_parcels,
              notes: patch.notes === undefined ? current.notes : patch.notes
            }
            const changed = changedKeys(current, next)
            const editable = editableRouteFields(route.status)
            const locked = editable === "all" ? [] : changed.filter((k) => !editable.has(k))
            if (locked.length > 0) {
              const allowed = editable === "all" ? [] : [...editable]
              return yield* new Conflict({
                reason: allowed.length === 0
                  ? `A ${route.status} route cannot change`
                  : `A ${route.status} route can only change ${allowed.join(", ")}; not ${locked.join(", ")}`
              })
            }
            if (changed.includes("driver_id")) yield* checkDriver(tenant, next.driver_id)
            if (changed.length === 0) return yield* withStops(tenant, route)
            // Capacities that follow a new vehicle are part of that change, allowed wherever it is.
            const vehicle = changed.includes("vehicle_id") && next.vehicle_id !== null ? yield* vehicleOf(tenant, next.vehicle_id) : undefined
            const record = {
              ...next,
              ...(vehicle === undefined ? {} : capacitiesFrom(vehicle, patch, next)),
              updated_at: yield* nowIso
            }
            yield* repo.update(tenant, changed.some((k) => geometryFields.has(k)) ? clearOptimization(record) : record)
            return yield* reread(tenant, id)
          }))
        }),

        ...(yield* RouteStops),
        ...(yield* RouteLifecycle)
      })
    })
  )
}
