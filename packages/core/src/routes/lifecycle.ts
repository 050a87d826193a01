import { Effect, Option } from "effect"
import { event, routeDispatchedEventId } from "../events/catalog.ts"
import { Outbox } from "../events/Outbox.ts"
import { FleetRepo } from "../fleet/FleetRepo.ts"
import { InvalidTransition, Unprocessable } from "../shared/errors.ts"
import type { Tenant } from "../shared/tenant.ts"
import { nowIso } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { TenancyRepo } from "../tenancy/TenancyRepo.ts"
import { recordOf, RouteAccess } from "./access.ts"
import type { DeliveryRoute, RouteAction, RouteStatus, Stop } from "./model.ts"
import { Optimizer } from "./Optimizer.ts"
import { capacityOverflow, routeTransitions, transition } from "./rules.ts"

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

/**
 * The lifecycle of a route (the moves of `routeLifecycle`), each on the locked
 * route in one transaction; the dispatch writes `delivery_route.dispatched`
 * to the outbox in its own.
 */
export const RouteLifecycle = Effect.gen(function*() {
  const { found, repo, reread } = yield* RouteAccess
  const tenancy = yield* TenancyRepo
  const outbox = yield* Outbox
  const fleet = yield* FleetRepo
  const tx = yield* Transactor
  const optimizer = yield* Optimizer

  /**
   * Runs `action` on the locked route in one transaction: refused when the
   * lifecycle forbids it from the route's status, otherwise `change` writes
   * the route, which is then read back as stored.
   */
  const move = <E>(
    tenant: Tenant,
    id: string,
    action: RouteAction,
    change: (route: DeliveryRoute, to: RouteStatus) => Effect.Effect<void, E>
  ) =>
    tx.withTransaction(Effect.gen(function*() {
      const route = yield* found(tenant, id, true)
      const to = transition(route.status, action)
      if (to === undefined) return yield* refuse(route, action)
      yield* change(route, to)
      return yield* reread(tenant, id)
    }))

  /** The route's stops; a route without any cannot be planned or sent. */
  const stopsToPlan = (tenant: Tenant, route: DeliveryRoute) =>
    Effect.flatMap(repo.stops(tenant, route.id), (stops) => stops.length === 0 ? Effect.fail(noStops(route)) : Effect.succeed(stops))

  /** A lifecycle move that only stamps a time. */
  const simpleMove = (action: "start" | "complete" | "cancel", stamp: "started_at" | "completed_at" | "cancelled_at") =>
    Effect.fn(`Routes.${action}`)(function*(tenant: Tenant, id: string) {
      return yield* move(tenant, id, action, (route, to) =>
        Effect.flatMap(nowIso, (at) => repo.update(tenant, { ...recordOf(route), status: to, [stamp]: at, updated_at: at })))
    })

  return {
    optimize: Effect.fn("Routes.optimize")(function*(tenant: Tenant, id: string) {
      return yield* move(tenant, id, "optimize", (route, to) =>
        Effect.gen(function*() {
          const stops = yield* stopsToPlan(tenant, route)
          yield* checkCapacity(route, stops)
          const plan = yield* optimizer.optimize({
            start: { latitude: route.start_latitude, longitude: route.start_longitude },
            roundTrip: route.round_trip,
            stops,
            capacityKg: route.capacity_kg,
            capacityParcels: route.capacity_parcels
          })
          const expected = new Set<string>(stops.map((s) => s.id))
          if (plan.order.length !== stops.length || new Set(plan.order).size !== stops.length || plan.order.some((s) => !expected.has(s))) {
            return yield* Effect.die(new Error(`The optimizer '${plan.optimizer}' returned an order that is not a permutation of the stops`))
          }
          const at = yield* nowIso
          if (plan.order.some((s, i) => s !== stops[i]!.id)) yield* repo.setStopOrder(tenant, route.id, plan.order, at)
          yield* repo.update(tenant, {
            ...recordOf(route),
            status: to,
            total_distance_km: Math.round(plan.totalDistanceKm * 1000) / 1000,
            total_duration_minutes: Math.round(plan.totalDurationMinutes),
            optimized_at: at,
            optimizer: plan.optimizer,
            updated_at: at
          })
        }))
    }),

    dispatch: Effect.fn("Routes.dispatch")(function*(tenant: Tenant, id: string) {
      return yield* move(tenant, id, "dispatch", (route, to) =>
        Effect.gen(function*() {
          const stops = yield* stopsToPlan(tenant, route)
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
          // Decided in docs/decisions.md ("Fleet vehicles and court cases"): 422, like the driver who left.
          const vehicle = yield* fleet.find(tenant, route.vehicle_id)
          if (Option.isNone(vehicle)) {
            return yield* new Unprocessable({
              errorCode: "vehicle_not_registered",
              reason: `The vehicle ${route.vehicle_id} is not in the fleet registry; give the route a registered vehicle`
            })
          }
          if (!vehicle.value.active) {
            return yield* new Unprocessable({
              errorCode: "vehicle_inactive",
              reason: `The vehicle ${vehicle.value.plate} is inactive; activate it or give the route another vehicle`
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
          yield* repo.update(tenant, { ...recordOf(route), status: to, dispatched_at: at, dispatch_count: ordinal, updated_at: at })
        }))
    }),

    start: simpleMove("start", "started_at"),
    complete: simpleMove("complete", "completed_at"),
    cancel: simpleMove("cancel", "cancelled_at")
  }
})
