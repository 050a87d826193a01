import { type TransitionRules, transitionTable } from "../shared/transitions.ts"
import { type RouteAction, RouteStatus } from "./model.ts"

/**
 * The lifecycle of a delivery route: for each action, the statuses it may
 * start from and the status it leads to. Optimizing a planned route again and
 * dispatching a dispatched route again (a new driver, a changed vehicle) are
 * allowed; everything else not listed is an invalid transition.
 */
export const routeLifecycle = transitionTable(RouteStatus.literals, {
  optimize: { from: ["DRAFT", "PLANNED"], to: "PLANNED" },
  dispatch: { from: ["PLANNED", "DISPATCHED"], to: "DISPATCHED" },
  start: { from: ["DISPATCHED"], to: "IN_PROGRESS" },
  complete: { from: ["IN_PROGRESS"], to: "COMPLETED" },
  cancel: { from: ["DRAFT", "PLANNED", "DISPATCHED"], to: "CANCELLED" }
} satisfies TransitionRules<RouteStatus, RouteAction>)

export const routeTransitions = routeLifecycle.rules

/** The status `action` leads to from `from`, or undefined when the table forbids it. */
export const transition = routeLifecycle.target

/** Stops may be added, changed, removed and reordered only while the route is being planned. */
export const stopsEditable = (status: RouteStatus): boolean => status === "DRAFT" || status === "PLANNED"

/**
 * Route fields a PATCH may change in each status. While planning, all of them;
 * once dispatched, only who drives what (then dispatch again) plus the name and
 * notes; on the road only the notes; a finished route is closed.
 */
export const editableRouteFields = (status: RouteStatus): "all" | ReadonlySet<string> => {
  switch (status) {
    case "DRAFT":
    case "PLANNED":
      return "all"
    case "DISPATCHED":
      return new Set(["name", "notes", "driver_id", "vehicle_id"])
    case "IN_PROGRESS":
      return new Set(["notes"])
    case "COMPLETED":
    case "CANCELLED":
      return new Set()
  }
}

/** Fields whose change moves the route's geometry, so a previous optimization no longer describes it. */
export const geometryFields: ReadonlySet<string> = new Set([
  "start_location_id",
  "start_latitude",
  "start_longitude",
  "round_trip"
])

export interface Load {
  readonly parcels: number
  readonly weight_kg: number
}

/**
 * What the stops carry beyond the vehicle's capacity, or undefined when it
 * fits (an unset capacity is unlimited). Weights are summed in grams so the
 * comparison is exact.
 */
export const capacityOverflow = (
  stops: ReadonlyArray<Load>,
  capacity: { readonly capacity_kg: number | null; readonly capacity_parcels: number | null }
): { readonly parcels?: { total: number; capacity: number }; readonly weightKg?: { total: number; capacity: number } } | undefined => {
  let parcels = 0
  let grams = 0
  for (const s of stops) {
    parcels += s.parcels
    grams += Math.round(s.weight_kg * 1000)
  }
  const overParcels = capacity.capacity_parcels !== null && parcels > capacity.capacity_parcels
  const overWeight = capacity.capacity_kg !== null && grams > Math.round(capacity.capacity_kg * 1000)
  if (!overParcels && !overWeight) return undefined
  return {
    ...(overParcels ? { parcels: { total: parcels, capacity: capacity.capacity_parcels! } } : {}),
    ...(overWeight ? { weightKg: { total: grams / 1000, capacity: capacity.capacity_kg! } } : {})
  }
}

/** Minutes since midnight of an `HH:MM` time. */
export const minutesOfDay = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5))

/** A time window must end after it starts when both ends are given. */
export const windowIsOrdered = (start: string | null, end: string | null): boolean =>
  start === null || end === null || minutesOfDay(end) > minutesOfDay(start)

/** Route numbers: `R-` and the per-tenant sequence, at least six digits. */
export const formatRouteNumber = (n: number): string => `R-${String(n).padStart(6, "0")}`
