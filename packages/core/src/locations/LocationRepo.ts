import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Conflict } from "../shared/errors.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie, uniqueAsConflict } from "../shared/sql.ts"
import { keysetPage } from "../shared/sqlPage.ts"
import type { Tenant } from "../shared/tenant.ts"
import { toIso } from "../shared/time.ts"
import type { Location, LocationFilter } from "./model.ts"

export const locationConflicts = {
  locations_one_primary: "Another location is already primary",
  locations_code_unique: "Another location already uses this code"
}

/**
 * Storage port for locations. The store itself guarantees at most one primary
 * location per organization environment and unique codes; a write that would
 * break either fails with Conflict.
 */
export class LocationRepo extends Context.Service<LocationRepo, {
  readonly insert: (tenant: Tenant, location: Location) => Effect.Effect<void, Conflict>
  readonly update: (tenant: Tenant, location: Location) => Effect.Effect<void, Conflict>
  readonly find: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<Location>>
  readonly list: (tenant: Tenant, filter: LocationFilter, page: PageRequest) => Effect.Effect<Page<Location>>
  readonly remove: (tenant: Tenant, id: string) => Effect.Effect<boolean>
  /** Clears the primary flag of every location of the tenant except `exceptId`. */
  readonly clearPrimary: (tenant: Tenant, exceptId: string, at: string) => Effect.Effect<void>
}>()("@opsplatform/core/locations/LocationRepo") {
  static readonly layerSql: Layer.Layer<LocationRepo, never, SqlClient.SqlClient> = Layer.effect(
    LocationRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const conflicts = uniqueAsConflict(locationConflicts)
      const decode = (r: any): Location => ({
        id: r.id,
        name: r.name,
        code: r.code,
        vertical_type: r.vertical_type,
        is_primary: r.is_primary,
        address: r.address,
        latitude: r.latitude === null ? null : Number(r.latitude),
        longitude: r.longitude === null ? null : Number(r.longitude),
        created_at: toIso(r.created_at),
        updated_at: toIso(r.updated_at)
      })
      const tenantIs = (t: Tenant) => sql`organization_id = ${t.organizationId} AND environment = ${t.environment}`

      return LocationRepo.of({
        insert: (tenant, l) =>
          conflicts(sql`INSERT INTO locations (id, organization_id, environment, name, code, vertical_type, is_primary,
              address, latitude, longitude, created_at, updated_at)
            VALUES (${l.id}, ${tenant.organizationId}, ${tenant.environment}, ${l.name}, ${l.code}, ${l.vertical_type},
              ${l.is_primary}, ${l.address}, ${l.latitude}, ${l.longitude}, ${l.created_at}, ${l.updated_at})`).pipe(
            Effect.asVoid
          ),
        update: (tenant, l) =>
          conflicts(sql`UPDATE locations SET name = ${l.name}, code = ${l.code}, vertical_type = ${l.vertical_type},
              is_primary = ${l.is_primary}, address = ${l.address}, latitude = ${l.latitude},
              longitude = ${l.longitude}, updated_at = ${l.updated_at}
            WHERE id = ${l.id} AND ${tenantIs(tenant)}`).pipe(Effect.asVoid),
        find: (tenant, id) =>
          orDie(sql`SELECT * FROM locations WHERE id = ${id} AND ${tenantIs(tenant)}`).pipe(
            Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), decode))
          ),
        list: (tenant, filter, page) =>
          keysetPage(sql, {
            table: "locations",
            where: sql.and([
              tenantIs(tenant),
              filter.vertical_type === undefined ? sql`TRUE` : sql`vertical_type = ${filter.vertical_type}`,
              filter.is_primary === undefined ? sql`TRUE` : sql`is_primary = ${filter.is_primary}`
            ]),
            page,
            decode
          }),
        remove: (tenant, id) =>
          orDie(sql`DELETE FROM locations WHERE id = ${id} AND ${tenantIs(tenant)} RETURNING id`).pipe(
            Effect.map((rows) => rows.length > 0)
          ),
        clearPrimary: (tenant, exceptId, at) =>
          orDie(sql`UPDATE locations SET is_primary = FALSE, updated_at = ${at}
            WHERE ${tenantIs(tenant)} AND is_primary AND id <> ${exceptId}`).pipe(Effect.asVoid)
      })
    })
  )
}
