import { Effect, Layer, Option } from "effect"
import { type DeliveryRoute, RouteFilter, type RouteRecord, type Stop, type StopRecord } from "@opsplatform/core/routes/model"
import { dayRange } from "@opsplatform/core/shared/time"
import { RouteRepo } from "@opsplatform/core/routes/RouteRepo"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { MemoryStore } from "./MemoryStore.ts"
import { filterPredicates, memoryTenantTable } from "./rows.ts"

const tenantKey = (tenant: Tenant) => `${tenant.organizationId}/${tenant.environment}`

const withoutRoute = ({ route_id: _, ...stop }: StopRecord): Stop => stop

/** The in-memory twin of `RouteRepo.layerSql`. */
export const RouteRepoMemory: Layer.Layer<RouteRepo, never, MemoryStore> = Layer.effect(
  RouteRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const routes = memoryTenantTable<RouteRecord>(store, "delivery_routes")
    const stops = memoryTenantTable<StopRecord>(store, "delivery_route_stops")
    const numbers = store.table<number>("delivery_route_numbers")

    const stopsOf = (tenant: Tenant, routeId: string) =>
      stops.filter(tenant, (s) => s.route_id === routeId).sort((a, b) => a.position - b.position)
    const withCount = (tenant: Tenant) => (r: RouteRecord): DeliveryRoute => ({ ...r, stop_count: stopsOf(tenant, r.id).length })
    const find = (tenant: Tenant, id: string) => Effect.sync(() => Option.map(routes.find(tenant, id), withCount(tenant)))

    return RouteRepo.of({
      nextNumber: (tenant) =>
        Effect.sync(() => {
          const next = (numbers.get(tenantKey(tenant)) ?? 0) + 1
          numbers.set(tenantKey(tenant), next)
          return next
        }),
      insert: (tenant, r) => Effect.sync(() => routes.insert(tenant, r)),
      update: (tenant, r) =>
        Effect.sync(() => {
          for (const current of Option.toArray(routes.find(tenant, r.id))) {
            routes.update(tenant, { ...r, number: current.number, created_at: current.created_at })
          }
        }),
      find,
      // Memory transactions run one at a time, so reading is already exclusive.
      lock: find,
      list: (tenant, f, timeZone, page) =>
        Effect.sync(() => {
          const listed = routes.page(
            tenant,
            filterPredicates(RouteFilter, f, {
              date_from: (day) => {
                const from = Date.parse(dayRange(day, undefined, timeZone).from!)
                return (r: RouteRecord) => Date.parse(r.route_date) >= from
              },
              date_to: (day) => {
                const before = dayRange(undefined, day, timeZone).before
                return before === undefined ? undefined : (r: RouteRecord) => Date.parse(r.route_date) < Date.parse(before)
              }
            }),
            page
          )
          return { ...listed, items: listed.items.map(withCount(tenant)) }
        }),
      stops: (tenant, routeId) => Effect.sync(() => stopsOf(tenant, routeId).map(withoutRoute)),
      insertStops: (tenant, routeId, added) =>
        Effect.sync(() => {
          for (const s of added) stops.insert(tenant, { ...s, route_id: routeId })
        }),
      updateStop: (tenant, routeId, s) =>
        Effect.sync(() => {
          for (const current of Option.toArray(stops.find(tenant, s.id))) {
            if (current.route_id === routeId) {
              stops.update(tenant, { ...s, route_id: routeId, position: current.position, created_at: current.created_at })
            }
          }
        }),
      removeStop: (tenant, routeId, stopId) =>
        Effect.sync(() => {
          const current = Option.getOrUndefined(stops.find(tenant, stopId))
          if (current === undefined || current.route_id !== routeId) return false
          stops.remove(tenant, stopId)
          for (const s of stopsOf(tenant, routeId)) {
            if (s.position > current.position) stops.update(tenant, { ...s, position: s.position - 1 })
          }
          return true
        }),
      setStopOrder: (tenant, routeId, stopIds, at) =>
        Effect.sync(() => {
          stopIds.forEach((id, i) => {
            for (const s of Option.toArray(stops.find(tenant, id))) {
              if (s.route_id === routeId && s.position !== i + 1) stops.update(tenant, { ...s, position: i + 1, updated_at: at })
            }
          })
        }),
      unfinishedWithVehicle: (tenant, vehicleId) =>
        Effect.sync(() =>
          routes.filter(tenant, (r) => r.vehicle_id === vehicleId && r.status !== "COMPLETED" && r.status !== "CANCELLED")
            .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id))
        )
    })
  })
)
