import { Context, DateTime, Effect, Layer, Option } from "effect"
import { event, routeDispatchedEventId } from "../events/catalog.ts"
import { Outbox } from "../events/Outbox.ts"
import { LocationRepo } from "../locations/LocationRepo.ts"
import { Conflict, InvalidTransition, NotFound, Unprocessable, ValidationFailed } from "../shared/errors.ts"
import { Ids } from "../shared/Ids.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import type { Tenant } from "../shared/tenant.ts"
import { nowIso } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { TenancyRepo } from "../tenancy/TenancyRepo.ts"
import {
  type AddressInput,
  type DeliveryRoute,
  type DeliveryRouteWithStops,
  isUuid,
  MAX_STOPS,
  normalizeAddress,
  type RouteAction,
  type RouteCreate,
  type RouteListFilter,
  type RouteUpdate,
  type Stop,
  type StopCreate,
  type StopUpdate
} from "./model.ts"
import { Optimizer } from "./Optimizer.ts"
import { type RouteRecord, RouteRepo } from "./RouteRepo.ts"
import {
  capacityOverflow,
  editableRouteFields,
  formatRouteNumber,
  geometryFields,
  routeTransitions,
  stopsEditable,
  transition,
  windowIsOrdered
} from "./rules.ts"

type Detail = DeliveryRouteWithStops
type Issue = { field: string; issue: string }

/** An instant as the API reports it: UTC, millisecond precision. */
const normalizeInstant = (s: string): string => DateTime.formatIso(DateTime.makeUnsafe(s))

/** The instant a calendar day starts in a time zone. */
const dayStart = (date: string, timeZone: string): string => {
  const [year, month, day] = date.split("-").map(Number) as [number, number, number]
  const zoned = DateTime.makeZonedUnsafe({ year, month, day, hour: 0, minute: 0, second: 0, millisecond: 0 }, {
    timeZone,
    adjustForTimeZone: true
  })
  return DateTime.formatIso(DateTime.toUtc(zoned))
}

const nextDay = (date: string): string => {
  const [year, month, day] = date.split("-").map(Number) as [number, number, number]
  return DateTime.formatIsoDate(DateTime.add(DateTime.makeUnsafe({ year, month, day }), { days: 1 }))
}

const stripCount = ({ stop_count: _, ...record }: DeliveryRoute): RouteRecord => record

const clearOptimization = <R extends RouteRecord>(route: R): R => ({
  ...route,
  total_distance_km: null,
  total_duration_minutes: null,
  optimized_at: null,
  optimizer: null
})

const windowIssues = (prefix: string, stop: { window_start: string | null; window_end: string | null }): Array<Issue> =>
  windowIsOrdered(stop.window_start, stop.window_end)
    ? []
    : [{ field: `${prefix}window_end`, issue: "must be later than window_start" }]

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

/**
 * Delivery routes: planning (stops, optimization), the lifecycle, and the
 * `delivery_route.dispatched` event, written to the outbox in the dispatch's
 * own transaction.
 */
export class Routes extends Context.Service<Routes, {
  readonly create: (tenant: Tenant, input: RouteCreate) => Effect.Effect<Detail, NotFound | ValidationFailed>
  readonly get: (tenant: Tenant, id: string) => Effect.Effect<Detail, NotFound>
  readonly list: (tenant: Tenant, filter: RouteListFilter, page: PageRequest) => Effect.Effect<Page<DeliveryRoute>, ValidationFailed>
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
    RouteRepo | LocationRepo | TenancyRepo | Outbox | Ids | Transactor
  > = Layer.effect(
    Routes,
    Effect.gen(function*() {
      const repo = yield* RouteRepo
      const locations = yield* LocationRepo
      const tenancy = yield* TenancyRepo
      const outbox = yield* Outbox
      const ids = yield* Ids
      const tx = yield* Transactor
      const optimizer = yield* Optimizer

      const notFound = (id: string) => new NotFound({ resource: "delivery route", id })
      const found = (tenant: Tenant, id: string, lock: boolean) =>
        (isUuid(id) ? (lock ? repo.lock(tenant, id) : repo.find(tenant, id)) : Effect.succeed(Option.none()))
          .pipe(
            Effect.flatMap(Option.match({ onNone: () => Effect.fail(notFound(id)), onSome: Effect.succeed }))
          )
      const withStops = (tenant: Tenant, route: DeliveryRoute) =>
        Effect.map(repo.stops(tenant, route.id), (stops): Detail => ({ ...route, stops }))
      /** Re-reads the route after a change, so the answer is what storage holds. */
      const reread = (tenant: Tenant, id: string) => Effect.flatMap(found(tenant, id, false), (r) => withStops(tenant, r))

      const checkDriver = (tenant: Tenant, driverId: string | null | undefined) =>
        driverId === null || driverId === undefined
          ? Effect.void
          : Effect.flatMap(tenancy.findMember(tenant.organizationId, driverId), (member) =>
            Option.isNone(member) ? Effect.fail(new NotFound({ resource: "member", id: driverId })) : Effect.void)

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
        input: {
          readonly start_location_id?: string | null | undefined
          readonly start_address?: AddressInput | null | undefined
          readonly start_latitude?: number | null | undefined
          readonly start_longitude?: number | null | undefined
        }
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

      const newStop = (input: StopCreate, position: number, at: string) =>
        Effect.map(ids.uuid, (id): Stop => ({
          id,
          position,
          label: input.label.trim(),
          address: input.address === undefined || input.address === null ? null : normalizeAddress(input.address),
          latitude: input.latitude,
          longitude: input.longitude,
          parcels: input.parcels ?? 1,
          weight_kg: input.weight_kg ?? 0,
          service_minutes: input.service_minutes ?? 5,
          window_start: input.window_start ?? null,
          window_end: input.window_end ?? null,
          notes: input.notes ?? null,
          created_at: at,
          updated_at: at
        }))

      /** Runs a stop change on a locked route that is still being planned, then touches the route. */
      const planning = <E>(
        tenant: Tenant,
        id: string,
        change: (route: DeliveryRoute, at: string) => Effect.Effect<{ readonly moved: boolean }, E>
      ) =>
        tx.withTransaction(Effect.gen(function*() {
          const route = yield* found(tenant, id, true)
          if (!stopsEditable(route.status)) {
            return yield* new Conflict({ reason: `The stops of a ${route.status} route cannot change` })
          }
          const at = yield* nowIso
          const { moved } = yield* change(route, at)
          const record = { ...stripCount(route), updated_at: at }
          yield* repo.update(tenant, moved ? clearOptimization(record) : record)
          return yield* reread(tenant, id)
        }))

      const refuse = (route: DeliveryRoute, action: RouteAction) =>
        new InvalidTransition({ resource: "delivery route", from: route.status, to: routeTransitions[action].to })

      const checkCapacity = (route: DeliveryRoute, stops: ReadonlyArray<Stop>) => {
        const over = capacityOverflow(stops, route)
        if (over === undefined) return Effect.void
        const parts = [
          ...(over.parcels ? [`${over.parcels.total} parcels for a capacity of ${over.parcels.capacity}`] : []),
          ...(over.weightKg ? [`${over.weightKg.total} kg for a capacity of ${over.weightKg.capacity} kg`] : [])
        ]
        return Effect.fail(
          new Unprocessable({ errorCode: "capacity_exceeded", reason: `The stops exceed the vehicle: ${parts.join("; ")}` })
        )
      }
      const noStops = (route: DeliveryRoute) =>
        new Unprocessable({ errorCode: "route_has_no_stops", reason: `Delivery route ${route.number} has no stops` })

      /** A lifecycle move that only stamps a time. */
      const simpleMove = (action: "start" | "complete" | "cancel", stamp: "started_at" | "completed_at" | "cancelled_at") =>
        Effect.fn(`Routes.${action}`)(function*(tenant: Tenant, id: string) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            const route = yield* found(tenant, id, true)
            const to = transition(route.status, action)
            if (to === undefined) return yield* refuse(route, action)
            const at = yield* nowIso
            yield* repo.update(tenant, { ...stripCount(route), status: to, [stamp]: at, updated_at: at })
            return yield* reread(tenant, id)
          }))
        })

      return Routes.of({
        create: Effect.fn("Routes.create")(function*(tenant, input) {
          const stops = input.stops ?? []
          const issues = stops.flatMap((s, i) => windowIssues(`stops.${i}.`, { window_start: s.window_start ?? null, window_end: s.window_end ?? null }))
          if (issues.length > 0) return yield* new ValidationFailed({ details: issues })
          const start = yield* resolveStart(tenant, undefined, input)
          yield* checkDriver(tenant, input.driver_id)
          return yield* tx.withTransaction(Effect.gen(function*() {
            const at = yield* nowIso
            const route: RouteRecord = {
              id: yield* ids.uuid,
              number: formatRouteNumber(yield* repo.nextNumber(tenant)),
              name: input.name.trim(),
              status: "DRAFT",
              route_date: normalizeInstant(input.route_date),
              ...start,
              round_trip: input.round_trip ?? true,
              vehicle_id: input.vehicle_id ?? null,
              driver_id: input.driver_id ?? null,
              capacity_kg: input.capacity_kg ?? null,
              capacity_parcels: input.capacity_parcels ?? null,
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
            for (const [i, s] of stops.entries()) made.push(yield* newStop(s, i + 1, at))
            yield* repo.insertStops(tenant, route.id, made)
            return yield* reread(tenant, route.id)
          }))
        }),

        get: (tenant, id) => Effect.flatMap(found(tenant, id, false), (r) => withStops(tenant, r)),

        list: Effect.fn("Routes.list")(function*(tenant, filter, page) {
          if (filter.date_from !== undefined && filter.date_to !== undefined && filter.date_from > filter.date_to) {
            return yield* ValidationFailed.field("date_to", "must not be before date_from")
          }
          const org = yield* tenancy.findOrganization(tenant.organizationId)
          const zone = Option.match(org, { onNone: () => "UTC", onSome: (o) => o.time_zone })
          return yield* repo.list(tenant, {
            status: filter.status,
            routeDateFrom: filter.date_from === undefined ? undefined : dayStart(filter.date_from, zone),
            routeDateBefore: filter.date_to === undefined ? undefined : dayStart(nextDay(filter.date_to), zone)
          }, page)
        }),

        update: Effect.fn("Routes.update")(function*(tenant, id, patch) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            const route = yield* found(tenant, id, true)
            const current = stripCount(route)
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
            const changed = (Object.keys(next) as Array<keyof RouteRecord>).filter((k) => !same(next[k], current[k]))
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
            const record = { ...next, updated_at: yield* nowIso }
            yield* repo.update(tenant, changed.some((k) => geometryFields.has(k)) ? clearOptimization(record) : record)
            return yield* reread(tenant, id)
          }))
        }),

        addStop: Effect.fn("Routes.addStop")(function*(tenant, id, input) {
          const issues = windowIssues("", { window_start: input.window_start ?? null, window_end: input.window_end ?? null })
          if (issues.length > 0) return yield* new ValidationFailed({ details: issues })
          return yield* planning(tenant, id, (route, at) =>
            Effect.gen(function*() {
              if (route.stop_count >= MAX_STOPS) {
                return yield* new Unprocessable({ errorCode: "too_many_stops", reason: `A route holds at most ${MAX_STOPS} stops` })
              }
              yield* repo.insertStops(tenant, route.id, [yield* newStop(input, route.stop_count + 1, at)])
              return { moved: true }
            }))
        }),

        updateStop: Effect.fn("Routes.updateStop")(function*(tenant, id, stopId, patch) {
          return yield* planning(tenant, id, (route, at) =>
            Effect.gen(function*() {
              const stop = (yield* repo.stops(tenant, route.id)).find((s) => s.id === stopId)
              if (stop === undefined) return yield* new NotFound({ resource: "stop", id: stopId })
              const next: Stop = {
                ...stop,
                label: patch.label === undefined ? stop.label : patch.label.trim(),
                address: patch.address === undefined
                  ? stop.address
                  : patch.address === null
                  ? null
                  : normalizeAddress(patch.address),
                latitude: patch.latitude ?? stop.latitude,
                longitude: patch.longitude ?? stop.longitude,
                parcels: patch.parcels ?? stop.parcels,
                weight_kg: patch.weight_kg ?? stop.weight_kg,
                service_minutes: patch.service_minutes ?? stop.service_minutes,
                window_start: patch.window_start === undefined ? stop.window_start : patch.window_start,
                window_end: patch.window_end === undefined ? stop.window_end : patch.window_end,
                notes: patch.notes === undefined ? stop.notes : patch.notes,
                updated_at: at
              }
              const issues = windowIssues("", next)
              if (issues.length > 0) return yield* new ValidationFailed({ details: issues })
              yield* repo.updateStop(tenant, route.id, next)
              return {
                moved: next.latitude !== stop.latitude || next.longitude !== stop.longitude ||
                  next.service_minutes !== stop.service_minutes
              }
            }))
        }),

        removeStop: Effect.fn("Routes.removeStop")(function*(tenant, id, stopId) {
          return yield* planning(tenant, id, (route) =>
            Effect.gen(function*() {
              const removed = isUuid(stopId) && (yield* repo.removeStop(tenant, route.id, stopId))
              if (!removed) return yield* new NotFound({ resource: "stop", id: stopId })
              return { moved: true }
            }))
        }),

        reorderStops: Effect.fn("Routes.reorderStops")(function*(tenant, id, stopIds) {
          return yield* planning(tenant, id, (route, at) =>
            Effect.gen(function*() {
              const current = (yield* repo.stops(tenant, route.id)).map((s) => s.id)
              const known = new Set(current)
              if (stopIds.length !== current.length || stopIds.some((s) => !known.has(s))) {
                return yield* ValidationFailed.field("stop_ids", `must list each of the route's ${current.length} stops exactly once`)
              }
              const moved = stopIds.some((s, i) => s !== current[i])
              if (moved) yield* repo.setStopOrder(tenant, route.id, stopIds, at)
              return { moved }
            }))
        }),

        optimize: Effect.fn("Routes.optimize")(function*(tenant, id) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            const route = yield* found(tenant, id, true)
            const to = transition(route.status, "optimize")
            if (to === undefined) return yield* refuse(route, "optimize")
            const stops = yield* repo.stops(tenant, route.id)
            if (stops.length === 0) return yield* noStops(route)
            yield* checkCapacity(route, stops)
            const plan = yield* optimizer.optimize({
              start: { latitude: route.start_latitude, longitude: route.start_longitude },
              roundTrip: route.round_trip,
              stops,
              capacityKg: route.capacity_kg,
              capacityParcels: route.capacity_parcels
            })
            const expected = new Set(stops.map((s) => s.id))
            if (plan.order.length !== stops.length || new Set(plan.order).size !== stops.length || plan.order.some((s) => !expected.has(s))) {
              return yield* Effect.die(new Error(`The optimizer '${plan.optimizer}' returned an order that is not a permutation of the stops`))
            }
            const at = yield* nowIso
            if (plan.order.some((s, i) => s !== stops[i]!.id)) yield* repo.setStopOrder(tenant, route.id, plan.order, at)
            yield* repo.update(tenant, {
              ...stripCount(route),
              status: to,
              total_distance_km: Math.round(plan.totalDistanceKm * 1000) / 1000,
              total_duration_minutes: Math.round(plan.totalDurationMinutes),
              optimized_at: at,
              optimizer: plan.optimizer,
              updated_at: at
            })
            return yield* reread(tenant, id)
          }))
        }),

        dispatch: Effect.fn("Routes.dispatch")(function*(tenant, id) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            const route = yield* found(tenant, id, true)
            const to = transition(route.status, "dispatch")
            if (to === undefined) return yield* refuse(route, "dispatch")
            const stops = yield* repo.stops(tenant, route.id)
            if (stops.length === 0) return yield* noStops(route)
            if (route.driver_id === null) {
              return yield* new Unprocessable({ errorCode: "driver_required", reason: "Set driver_id before dispatching the route" })
            }
            if (route.vehicle_id === null) {
              return yield* new Unprocessable({ errorCode: "vehicle_required", reason: "Set vehicle_id before dispatching the route" })
            }
            if (Option.isNone(yield* tenancy.findMember(tenant.organizationId, route.driver_id))) {
              return yield* new Unprocessable({
                errorCode: "driver_not_member",
                reason: `The driver ${route.driver_id} is no longer a member of the organization`
              })
            }
            yield* checkCapacity(route, stops)
            const at = yield* nowIso
            const ordinal = route.dispatch_count + 1
            yield* outbox.publish(
              tenant,
              event("delivery_route.dispatched", routeDispatchedEventId(route.id, ordinal), {
                id: route.id,
                number: route.number,
                driver_id: route.driver_id,
                vehicle_id: route.vehicle_id,
                stop_count: stops.length,
                dispatched_at: at
              })
            )
            yield* repo.update(tenant, { ...stripCount(route), status: to, dispatched_at: at, dispatch_count: ordinal, updated_at: at })
            return yield* reread(tenant, id)
          }))
        }),

        start: simpleMove("start", "started_at"),
        complete: simpleMove("complete", "completed_at"),
        cancel: simpleMove("cancel", "cancelled_at")
      })
    })
  )
}
