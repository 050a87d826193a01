import { Context, Effect, Layer, Option, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { NullableTimestamp, Timestamp } from "../shared/columns.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie } from "../shared/sql.ts"
import { filterConditions, tenantTable } from "../shared/tables.ts"
import type { Tenant, TenantScoped } from "../shared/tenant.ts"
import { DeviceFilter, DeviceRecord } from "./model.ts"

export const DeviceRow = DeviceRecord.mapFields(Struct.assign({
  created_at: Timestamp,
  updated_at: Timestamp,
  unlock_disabled_at: NullableTimestamp,
  deleted_at: NullableTimestamp
}))

/** Where a device's PIN stands after a wrong attempt. */
export interface WrongPin {
  /** Wrong PINs in a row, this one included. */
  readonly consecutive: number
  readonly disabled: boolean
}

/**
 * Storage port for wall displays. A deleted device stays stored (its audit
 * trail and revoked tokens still name it) but is found by nothing. The PIN's
 * failure count moves by single atomic statements, so servers sharing one
 * database count every wrong PIN exactly once.
 */
export class DeviceRepo extends Context.Service<DeviceRepo, TenantScoped<{
  readonly insert: (tenant: Tenant, device: DeviceRecord) => Effect.Effect<void>
  readonly find: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<DeviceRecord>>
  readonly list: (tenant: Tenant, filter: DeviceFilter, page: PageRequest) => Effect.Effect<Page<DeviceRecord>>
  /** Writes the name, location and locale of a device that is not deleted; whether there was one. */
  readonly update: (tenant: Tenant, device: DeviceRecord) => Effect.Effect<boolean>
  /** Sets or clears the PIN's hash, and with it clears the failure count and the lockout; whether there was a device. */
  readonly setPin: (tenant: Tenant, id: string, pinHash: string | null, at: string) => Effect.Effect<boolean>
  /** Counts a wrong PIN; at `threshold` in a row the device's unlocking is disabled. None for no device. */
  readonly recordWrongPin: (
    tenant: Tenant,
    id: string,
    threshold: number,
    at: string
  ) => Effect.Effect<Option.Option<WrongPin>>
  /** A right PIN ends a run of wrong ones (unless unlocking was disabled meanwhile). */
  readonly recordRightPin: (tenant: Tenant, id: string) => Effect.Effect<void>
  readonly remove: (tenant: Tenant, id: string, at: string) => Effect.Effect<boolean>
}>>()("@opsplatform/core/display/DeviceRepo") {
  static readonly layerSql: Layer.Layer<DeviceRepo, never, SqlClient.SqlClient> = Layer.effect(
    DeviceRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const devices = tenantTable(sql, { name: "devices", row: DeviceRow })
      const live = sql`deleted_at IS NULL`
      return DeviceRepo.of({
        insert: (tenant, d) => orDie(devices.insert(tenant, d)),
        find: (tenant, id) => devices.find(tenant, [sql`id = ${id}`, live]),
        list: (tenant, filter, page) =>
          devices.page(tenant, [live, ...filterConditions(sql, DeviceFilter, filter)], page),
        update: (tenant, d) =>
          orDie(sql`UPDATE devices SET name = ${d.name}, location_id = ${d.location_id}, locale = ${d.locale},
              updated_at = ${d.updated_at}
            WHERE ${devices.where(tenant, [sql`id = ${d.id}`, live])} RETURNING id`).pipe(Effect.map((rows) => rows.length > 0)),
        setPin: (tenant, id, pinHash, at) =>
          orDie(sql`UPDATE devices SET pin_hash = ${pinHash}, failed_pin_attempts = 0, unlock_disabled_at = NULL,
              updated_at = ${at}
            WHERE ${devices.where(tenant, [sql`id = ${id}`, live])} RETURNING id`).pipe(Effect.map((rows) => rows.length > 0)),
        recordWrongPin: (tenant, id, threshold, at) =>
          orDie(sql<{ readonly failed_pin_attempts: number; readonly disabled: boolean }>`UPDATE devices SET
              failed_pin_attempts = failed_pin_attempts + 1,
              unlock_disabled_at = CASE WHEN unlock_disabled_at IS NULL AND failed_pin_attempts + 1 >= ${threshold}
                THEN ${at}::timestamptz ELSE unlock_disabled_at END
            WHERE ${devices.where(tenant, [sql`id = ${id}`, live])}
            RETURNING failed_pin_attempts, unlock_disabled_at IS NOT NULL AS disabled`).pipe(
            Effect.map((rows) => {
              const row = rows[0]
              return row === undefined
                ? Option.none<WrongPin>()
                : Option.some({ consecutive: Number(row.failed_pin_attempts), disabled: Boolean(row.disabled) })
            })
          ),
        recordRightPin: (tenant, id) =>
          orDie(sql`UPDATE devices SET failed_pin_attempts = 0
            WHERE ${devices.where(tenant, [sql`id = ${id}`, sql`unlock_disabled_at IS NULL`, sql`failed_pin_attempts > 0`])}`)
            .pipe(Effect.asVoid),
        remove: (tenant, id, at) =>
          orDie(sql`UPDATE devices SET deleted_at = ${at}, pin_hash = NULL, updated_at = ${at}
            WHERE ${devices.where(tenant, [sql`id = ${id}`, live])} RETURNING id`).pipe(Effect.map((rows) => rows.length > 0))
      })
    })
  )
}
