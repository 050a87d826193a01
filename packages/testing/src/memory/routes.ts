import { Effect, Layer, Option } from "effect"
import { CostingSettingsRepo } from "@opsplatform/core/costing/CostingSettingsRepo"
import type { FleetCostProfile, RateCard, SenderAddress } from "@opsplatform/core/costing/model"
import type { DeliveryRoute, Stop } from "@opsplatform/core/routes/model"
import { type RouteRecord, RouteRepo } from "@opsplatform/core/routes/RouteRepo"
import { pageFromArray } from "@opsplatform/core/shared/pagination"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { MemoryStore } from "./MemoryStore.ts"
import { inTenant, keyOf, type Scoped } from "./rows.ts"

type StoredStop = Scoped<Stop> & { readonly route_id: string }

const tenantKey = (tenant: Tenant) => `${tenant.organizationId}/${tenant.environment}`

/** The in-memory twin of `RouteRepo.layerSql`. */
export const RouteRepoMemory: Layer.Layer<RouteRepo, never, MemoryStore> = Layer.effect(
  RouteRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const routes = store.table<Scoped<RouteRecord>>("delivery_routes")
    const stops = store.table<StoredStop>("delivery_route_stops")
    const numbers = store.table<number>("delivery_route_numbers")

    const stopsOf = (tenant: Tenant, routeId: string) =>
      [...stops.values()].filter((s) => s.route_id === routeId && inTenant(tenant)(s)).sort((a, b) => a.position - b.position)
    const plainStop = ({ environment: _e, organization_id: _o, route_id: _r, ...s }: StoredStop): Stop => s
    const withCount = (tenant: Tenant) => ({ environment: _e, organization_id: _o, ...r }: Scoped<RouteRecord>): DeliveryRoute => ({
      ...r,
      stop_count: stopsOf(tenant, r.id).length
    })
    const scoped = <A>(tenant: Tenant, a: A) => ({ ...a, organization_id: tenant.organizationId, environment: tenant.environment })
    const find = (tenant: Tenant, id: string) =>
      Effect.sync(() => Option.map(Option.filter(Option.fromNullishOr(routes.get(id)), inTenant(tenant)), withCount(tenant)))

    return RouteRepo.of({
      nextNumber: (tenant) =>
        Effect.sync(() => {
          const next = (numbers.get(tenantKey(tenant)) ?? 0) + 1
          numbers.set(tenantKey(tenant), next)
          return next
        }),
      insert: (tenant, r) => Effect.sync(() => void routes.set(r.id, scoped(tenant, r))),
      update: (tenant, r) =>
        Effect.sync(() => {
          const current = routes.get(r.id)
          if (current && inTenant(tenant)(current)) routes.set(r.id, scoped(tenant, { ...r, created_at: current.created_at }))
        }),
      find,
      // Memory transactions run one at a time, so reading is already exclusive.
      lock: find,
      list: (tenant, f, page) =>
        Effect.sync(() =>
          pageFromArray(
            page,
            [...routes.values()].filter((r) =>
              inTenant(tenant)(r) && (f.status === undefined || r.status === f.status) &&
              (f.routeDateFrom === undefined || Date.parse(r.route_date) >= Date.parse(f.routeDateFrom)) &&
              (f.routeDateBefore === undefined || Date.parse(r.route_date) < Date.parse(f.routeDateBefore))
            ).map(withCount(tenant)),
            keyOf
          )
        ),
      stops: (tenant, routeId) => Effect.sync(() => stopsOf(tenant, routeId).map(plainStop)),
      insertStops: (tenant, routeId, added) =>
        Effect.sync(() => {
          for (const s of added) stops.set(s.id, { ...scoped(tenant, s), route_id: routeId })
        }),
      updateStop: (tenant, routeId, s) =>
        Effect.sync(() => {
          const current = stops.get(s.id)
          if (current && current.route_id === routeId && inTenant(tenant)(current)) {
            stops.set(s.id, { ...current, ...s, position: current.position, created_at: current.created_at })
          }
        }),
      removeStop: (tenant, routeId, stopId) =>
        Effect.sync(() => {
          const current = stops.get(stopId)
          if (!current || current.route_id !== routeId || !inTenant(tenant)(current)) return false
          stops.delete(stopId)
          for (const s of stopsOf(tenant, routeId)) {
            if (s.position > current.position) stops.set(s.id, { ...s, position: s.position - 1 })
          }
          return true
        }),
      setStopOrder: (tenant, routeId, stopIds, at) =>
        Effect.sync(() => {
          stopIds.forEach((id, i) => {
            const s = stops.get(id)
            if (s && s.route_id === routeId && inTenant(tenant)(s) && s.position !== i + 1) {
              stops.set(id, { ...s, position: i + 1, updated_at: at })
            }
          })
        })
    })
  })
)

/** The in-memory twin of `CostingSettingsRepo.layerSql`. */
export const CostingSettingsRepoMemory: Layer.Layer<CostingSettingsRepo, never, MemoryStore> = Layer.effect(
  CostingSettingsRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const profiles = store.table<FleetCostProfile>("fleet_cost_profiles")
    const cards = store.table<RateCard>("courier_rate_cards")
    const senders = store.table<SenderAddress>("sender_addresses")
    // Stored as JSON, as the database keeps it: a caller's later mutation never reaches the store.
    const copy = <A>(a: A): A => JSON.parse(JSON.stringify(a))
    return CostingSettingsRepo.of({
      findProfile: (tenant) => Effect.sync(() => Option.map(Option.fromNullishOr(profiles.get(tenantKey(tenant))), copy)),
      saveProfile: (tenant, p) => Effect.sync(() => void profiles.set(tenantKey(tenant), copy(p))),
      findRateCard: (tenant) => Effect.sync(() => Option.map(Option.fromNullishOr(cards.get(tenantKey(tenant))), copy)),
      saveRateCard: (tenant, c) => Effect.sync(() => void cards.set(tenantKey(tenant), copy(c))),
      findSender: (tenant) => Effect.sync(() => Option.map(Option.fromNullishOr(senders.get(tenantKey(tenant))), copy)),
      saveSender: (tenant, s) => Effect.sync(() => void senders.set(tenantKey(tenant), copy(s)))
    })
  })
)
