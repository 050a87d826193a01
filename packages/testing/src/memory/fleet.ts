import { Effect, Layer, Option } from "effect"
import { fleetConflicts, FleetRepo } from "@opsplatform/core/fleet/FleetRepo"
import { type FleetVehicle, FleetVehicleFilter } from "@opsplatform/core/fleet/model"
import { Conflict } from "@opsplatform/core/shared/errors"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { MemoryStore } from "./MemoryStore.ts"
import { filterPredicates, memoryTenantTable, sortedById } from "./rows.ts"

/** The in-memory twin of `FleetRepo.layerSql`. */
export const FleetRepoMemory: Layer.Layer<FleetRepo, never, MemoryStore> = Layer.effect(
  FleetRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const vehicles = memoryTenantTable<FleetVehicle>(store, "fleet_vehicles")
    // The unique index of the SQL schema: one vehicle per plate in a tenant.
    const check = (tenant: Tenant, v: FleetVehicle) =>
      vehicles.filter(tenant, (o) => o.id !== v.id && o.plate === v.plate).length > 0
        ? Effect.fail(new Conflict({ reason: fleetConflicts.fleet_vehicles_plate_unique }))
        : Effect.void
    const insert = (tenant: Tenant, v: FleetVehicle) => Effect.andThen(check(tenant, v), Effect.sync(() => vehicles.insert(tenant, v)))
    return FleetRepo.of({
      insert,
      update: (tenant, v) =>
        Effect.andThen(
          check(tenant, v),
          Effect.sync(() => {
            for (const current of vehicles.filter(tenant, (o) => o.id === v.id)) {
              vehicles.update(tenant, { ...v, created_at: current.created_at })
            }
          })
        ),
      // Memory transactions run one at a time, so reading is already exclusive.
      find: (tenant, id) => Effect.sync(() => vehicles.find(tenant, id)),
      list: (tenant, f, page) =>
        Effect.sync(() =>
          vehicles.page(
            tenant,
            filterPredicates(FleetVehicleFilter, f),
            page
          )
        ),
      remove: (tenant, id) => Effect.sync(() => vehicles.remove(tenant, id)),
      insertAll: (tenant, list) => Effect.forEach(list, (v) => insert(tenant, v), { discard: true }),
      lockAll: (tenant, ids) => Effect.sync(() => sortedById(ids.flatMap((id) => Option.toArray(vehicles.find(tenant, id))))),
      removeAll: (tenant, ids) => Effect.sync(() => ids.forEach((id) => vehicles.remove(tenant, id))),
      findByPlates: (tenant, plates) =>
        Effect.sync(() => {
          const wanted = new Set(plates)
          return vehicles.filter(tenant, (v) => wanted.has(v.plate))
        })
    })
  })
)
