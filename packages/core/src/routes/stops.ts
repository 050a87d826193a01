import { Effect } from "effect"
import { Conflict, NotFound, Unprocessable, ValidationFailed } from "../shared/errors.ts"
import { Ids, newId } from "../shared/Ids.ts"
import { isUuid } from "../shared/schemas.ts"
import type { Tenant } from "../shared/tenant.ts"
import { nowIso } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { clearOptimization, recordOf, RouteAccess } from "./access.ts"
import { type DeliveryRoute, MAX_STOPS, normalizeAddress, type Stop, type StopCreate, StopId, type StopUpdate } from "./model.ts"
import { stopsEditable, windowIsOrdered } from "./rules.ts"

type Issue = { field: string; issue: string }

export const windowIssues = (prefix: string, stop: { window_start: string | null; window_end: string | null }): Array<Issue> =>
  windowIsOrdered(stop.window_start, stop.window_end)
    ? []
    : [{ field: `${prefix}window_end`, issue: "must be later than window_start" }]

/** A new stop at `position`, with the defaults of the fields left out. */
export const newStop = (ids: Ids["Service"], input: StopCreate, position: number, at: string) =>
  Effect.map(newId(ids, StopId), (id): Stop => ({
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

/**
 * The stops of a route while it is being planned: added, changed, removed and
 * reordered, each on the locked route. A change that moves the route's
 * geometry clears its optimization.
 */
export const RouteStops = Effect.gen(function*() {
  const { found, repo, reread } = yield* RouteAccess
  const ids = yield* Ids
  const tx = yield* Transactor

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
      const record = { ...recordOf(route), updated_at: at }
      yield* repo.update(tenant, moved ? clearOptimization(record) : record)
      return yield* reread(tenant, id)
    }))

  return {
    addStop: Effect.fn("Routes.addStop")(function*(tenant: Tenant, id: string, input: StopCreate) {
      const issues = windowIssues("", { window_start: input.window_start ?? null, window_end: input.window_end ?? null })
      if (issues.length > 0) return yield* new ValidationFailed({ details: issues })
      return yield* planning(tenant, id, (route, at) =>
        Effect.gen(function*() {
          if (route.stop_count >= MAX_STOPS) {
            return yield* new Unprocessable({ errorCode: "too_many_stops", reason: `A route holds at most ${MAX_STOPS} stops` })
          }
          yield* repo.insertStops(tenant, route.id, [yield* newStop(ids, input, route.stop_count + 1, at)])
          return { moved: true }
        }))
    }),

    updateStop: Effect.fn("Routes.updateStop")(function*(tenant: Tenant, id: string, stopId: string, patch: StopUpdate) {
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

    removeStop: Effect.fn("Routes.removeStop")(function*(tenant: Tenant, id: string, stopId: string) {
      return yield* planning(tenant, id, (route) =>
        Effect.gen(function*() {
          const removed = isUuid(stopId) && (yield* repo.removeStop(tenant, route.id, stopId))
          if (!removed) return yield* new NotFound({ resource: "stop", id: stopId })
          return { moved: true }
        }))
    }),

    reorderStops: Effect.fn("Routes.reorderStops")(function*(tenant: Tenant, id: string, stopIds: ReadonlyArray<string>) {
      return yield* planning(tenant, id, (route, at) =>
        Effect.gen(function*() {
          const current = (yield* repo.stops(tenant, route.id)).map((s) => s.id)
          const known = new Set<string>(current)
          if (stopIds.length !== current.length || stopIds.some((s) => !known.has(s))) {
            return yield* ValidationFailed.field("stop_ids", `must list each of the route's ${current.length} stops exactly once`)
          }
          const moved = stopIds.some((s, i) => s !== current[i])
          if (moved) yield* repo.setStopOrder(tenant, route.id, stopIds, at)
          return { moved }
        }))
    })
  }
})
