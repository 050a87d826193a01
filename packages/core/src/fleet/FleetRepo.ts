import { Context, Effect, Layer, type Option, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { NullableNumeric, Timestamp } from "../shared/columns.ts"
import type { Conflict } from "../shared/errors.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { uniqueAsConflict } from "../shared/sql.ts"
import { filterConditions, type FindOptions, tenantTable } from "../shared/tables.ts"
import type { BatchWrites, Tenant, TenantScoped } from "../shared/tenant.ts"
import { FleetVehicle, FleetVehicleFilter } from "./model.ts"

export const fleetConflicts = {
  fleet_vehicles_plate_unique: "Another vehicle of the organization already has this plate"
}

const FleetVehicleRow = FleetVehicle.mapFields(Struct.assign({
  capacity_kg: NullableNumeric,
  fuel_consumption_l_per_100km: NullableNumeric,
  created_at: Timestamp,
  updated_at: Timestamp
}))

/**
 * Storage port for the vehicle registry. The store guarantees one vehicle per
 * plate in an organization environment. `find` with `forUpdate` holds the
 * vehicle until the transaction ends: deleting a vehicle and giving it to a
 * route both take that lock, so neither sees the other half done (decided:
 * docs/decisions.md, "Fleet vehicles and court cases").
 */
export class FleetRepo extends Context.Service<FleetRepo, TenantScoped<BatchWrites<FleetVehicle> & {
  readonly insert: (tenant: Tenant, vehicle: FleetVehicle) => Effect.Effect<void, Conflict>
  readonly update: (tenant: Tenant, vehicle: FleetVehicle) => Effect.Effect<void, Conflict>
  readonly find: (tenant: Tenant, id: string, options?: FindOptions) => Effect.Effect<Option.Option<FleetVehicle>>
  readonly list: (tenant: Tenant, filter: FleetVehicleFilter, page: PageRequest) => Effect.Effect<Page<FleetVehicle>>
  readonly remove: (tenant: Tenant, id: string) => Effect.Effect<boolean>
  /** The tenant's vehicles with any of these plates (as stored: `normalizePlate`'s). */
  readonly findByPlates: (tenant: Tenant, plates: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<FleetVehicle>>
}>>()("@opsplatform/core/fleet/FleetRepo") {
  static readonly layerSql: Layer.Layer<FleetRepo, never, SqlClient.SqlClient> = Layer.effect(
    FleetRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const conflicts = uniqueAsConflict(fleetConflicts)
      const vehicles = tenantTable(sql, { name: "fleet_vehicles", row: FleetVehicleRow, fixed: ["created_at"] })
      return FleetRepo.of({
        insert: (tenant, v) => conflicts(vehicles.insert(tenant, v)),
        update: (tenant, v) => conflicts(vehicles.update(tenant, v)).pipe(Effect.asVoid),
        find: (tenant, id, options) => vehicles.findById(tenant, id, options),
        list: (tenant, f, page) =>
          vehicles.page(tenant, filterConditions(sql, FleetVehicleFilter, f), page),
        remove: (tenant, id) => Effect.map(vehicles.remove(tenant, [sql`id = ${id}`]), (n) => n > 0),
        insertAll: (tenant, list) => conflicts(vehicles.insertAll(tenant, list)),
        lockAll: (tenant, ids) => vehicles.findByIds(tenant, ids, { forUpdate: true }),
        removeAll: (tenant, ids) => ids.length === 0 ? Effect.void : Effect.asVoid(vehicles.remove(tenant, [sql.in("id", ids)])),
        // One JSON parameter, however many plates; the condition is the unique index's.
        findByPlates: (tenant, plates) =>
          plates.length === 0 ? Effect.succeed([]) : vehicles.findAll(tenant, [
            sql`plate IN (SELECT k FROM jsonb_array_elements_text(${JSON.stringify(plates)}::jsonb) AS k)`
          ])
      })
    })
  )
}
