import { Context, Effect, Layer, type Option, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { Timestamp } from "../shared/columns.ts"
import type { Conflict } from "../shared/errors.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie, uniqueAsConflict } from "../shared/sql.ts"
import { filterConditions, tenantTable } from "../shared/tables.ts"
import type { BatchWrites, Tenant, TenantScoped } from "../shared/tenant.ts"
import { Location, LocationFilter } from "./model.ts"

export const locationConflicts = {
  locations_one_primary: "Another location is already primary",
  locations_code_unique: "Another location already uses this code"
}

/** A stored location: the resource, its timestamps as timestamptz. */
const LocationRow = Location.mapFields(Struct.assign({ created_at: Timestamp, updated_at: Timestamp }))

/**
 * Storage port for locations. The store itself guarantees at most one primary
 * location per organization environment and unique codes; a write that would
 * break either fails with Conflict. Expenses and devices keep no location
 * that is removed (their reference is set to none).
 */
export class LocationRepo extends Context.Service<LocationRepo, TenantScoped<BatchWrites<Location> & {
  readonly insert: (tenant: Tenant, location: Location) => Effect.Effect<void, Conflict>
  readonly update: (tenant: Tenant, location: Location) => Effect.Effect<void, Conflict>
  readonly find: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<Location>>
  readonly list: (tenant: Tenant, filter: LocationFilter, page: PageRequest) => Effect.Effect<Page<Location>>
  readonly remove: (tenant: Tenant, id: string) => Effect.Effect<boolean>
  /**
   * Clears the primary flag of every location of the tenant except `exceptId`,
   * after waiting for any other transaction of the tenant doing the same: the
   * last one made primary wins instead of the others failing on the unique flag.
   */
  readonly clearPrimary: (tenant: Tenant, exceptId: string, at: string) => Effect.Effect<void>
  /** The tenant's locations with any of these codes, in any case. */
  readonly findByCodes: (tenant: Tenant, codes: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Location>>
}>>()("@opsplatform/core/locations/LocationRepo") {
  static readonly layerSql: Layer.Layer<LocationRepo, never, SqlClient.SqlClient> = Layer.effect(
    LocationRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const conflicts = uniqueAsConflict(locationConflicts)
      const locations = tenantTable(sql, { name: "locations", row: LocationRow })

      return LocationRepo.of({
        insert: (tenant, l) => conflicts(locations.insert(tenant, l)),
        update: (tenant, l) => conflicts(locations.update(tenant, l)).pipe(Effect.asVoid),
        find: (tenant, id) => locations.findById(tenant, id),
        list: (tenant, filter, page) =>
          locations.page(tenant, filterConditions(sql, LocationFilter, filter), page),
        remove: (tenant, id) => Effect.map(locations.remove(tenant, [sql`id = ${id}`]), (n) => n > 0),
        insertAll: (tenant, list) => conflicts(locations.insertAll(tenant, list)),
        lockAll: (tenant, ids) => locations.findByIds(tenant, ids, { forUpdate: true }),
        removeAll: (tenant, ids) => ids.length === 0 ? Effect.void : Effect.asVoid(locations.remove(tenant, [sql.in("id", ids)])),
        // One JSON parameter, however many codes; the condition is the unique index's lower(code).
        findByCodes: (tenant, codes) =>
          codes.length === 0 ? Effect.succeed([]) : locations.findAll(tenant, [
            sql`lower(code) IN (SELECT lower(k) FROM jsonb_array_elements_text(${JSON.stringify(codes)}::jsonb) AS k)`
          ]),
        clearPrimary: (tenant, exceptId, at) =>
          // A transaction-scoped lock per tenant; the UPDATE after it sees every primary committed meanwhile.
          orDie(sql`SELECT pg_advisory_xact_lock(hashtextextended(${
            `locations.primary:${tenant.organizationId}:${tenant.environment}`
          }, 0))`).pipe(
            Effect.andThen(orDie(sql`UPDATE locations SET is_primary = FALSE, updated_at = ${at}
              WHERE ${locations.where(tenant, [sql`is_primary`, sql`id <> ${exceptId}`])}`)),
            Effect.asVoid
          )
      })
    })
  )
}
