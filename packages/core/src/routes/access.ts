import { Effect, Option } from "effect"
import { NotFound } from "../shared/errors.ts"
import { isUuid } from "../shared/schemas.ts"
import type { Tenant } from "../shared/tenant.ts"
import type { DeliveryRoute, DeliveryRouteWithStops, RouteRecord } from "./model.ts"
import { RouteRepo } from "./RouteRepo.ts"

/** The stored record of a route read with its stop count. */
export const recordOf = ({ stop_count: _, ...record }: DeliveryRoute): RouteRecord => record

/** A route whose geometry changed: its previous optimization no longer describes it. */
export const clearOptimization = <R extends RouteRecord>(route: R): R => ({
  ...route,
  total_distance_km: null,
  total_duration_minutes: null,
  optimized_at: null,
  optimizer: null
})

/** How every part of the Routes service reads a route of the tenant. */
export const RouteAccess = Effect.gen(function*() {
  const repo = yield* RouteRepo

  /** The tenant's route, locked until the transaction ends when `lock`; unknown and malformed ids are 404. */
  const found = (tenant: Tenant, id: string, lock: boolean) =>
    (isUuid(id) ? (lock ? repo.lock(tenant, id) : repo.find(tenant, id)) : Effect.succeedNone).pipe(
      Effect.flatMap(Option.match({
        onNone: () => Effect.fail(new NotFound({ resource: "delivery route", id })),
        onSome: Effect.succeed
      }))
    )
  const withStops = (tenant: Tenant, route: DeliveryRoute) =>
    Effect.map(repo.stops(tenant, route.id), (stops): DeliveryRouteWithStops => ({ ...route, stops }))
  /** Re-reads the route after a change, so the answer is what storage holds. */
  const reread = (tenant: Tenant, id: string) => Effect.flatMap(found(tenant, id, false), (r) => withStops(tenant, r))

  return { repo, found, withStops, reread }
})
