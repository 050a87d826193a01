import { Context, Effect, Layer, Option, Schema, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { Json, NullableNumeric, NullableTimestamp, Numeric, Timestamp } from "../shared/columns.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie } from "../shared/sql.ts"
import { filterConditions, tenantTable } from "../shared/tables.ts"
import { dayRange } from "../shared/time.ts"
import type { Tenant, TenantScoped } from "../shared/tenant.ts"
import {
  Address,
  DeliveryRoute,
  RouteFilter,
  type RouteId,
  RouteRecord,
  type Stop,
  StopRecord
} from "./model.ts"

/** How a route's columns are stored where they differ from the record. */
const routeColumns = {
  route_date: Timestamp,
  start_address: Schema.NullOr(Json(Address)),
  capacity_kg: NullableNumeric,
  total_distance_km: NullableNumeric,
  optimized_at: NullableTimestamp,
  dispatched_at: NullableTimestamp,
  started_at: NullableTimestamp,
  completed_at: NullableTimestamp,
  cancelled_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp
}

/** A stored route, as written. */
export const RouteRow = RouteRecord.mapFields(Struct.assign(routeColumns))

/** A stored route as read: the record and the count of its stops (derived in the SELECT). */
export const DeliveryRouteRow = DeliveryRoute.mapFields(Struct.assign(routeColumns))

export const StopRow = StopRecord.mapFields(Struct.assign({
  address: Schema.NullOr(Json(Address)),
  weight_kg: Numeric,
  created_at: Timestamp,
  updated_at: Timestamp
}))

const NumberRow = Schema.Struct({ last_number: Schema.Int })

const withoutRoute = ({ route_id: _, ...stop }: StopRecord): Stop => stop

/**
 * Storage port for delivery routes and their stops (both tenant-owned). Stops
 * keep a dense `position` 1..n per route; removing one closes the gap. `lock`
 * reads a route and holds it until the transaction ends, so concurrent
 * changes of one route (a dispatch and its ordinal above all) run one after
 * another.
 */
export class RouteRepo extends Context.Service<RouteRepo, TenantScoped<{
  /** The next route number of the tenant (1, 2, ...); rolled back with its transaction. */
  readonly nextNumber: (tenant: Tenant) => Effect.Effect<number>
  readonly insert: (tenant: Tenant, route: RouteRecord) => Effect.Effect<void>
  /** Writes the route; its number and creation time never change. */
  readonly update: (tenant: Tenant, route: RouteRecord) => Effect.Effect<void>
  readonly find: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<DeliveryRoute>>
  readonly lock: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<DeliveryRoute>>
  /** `timeZone` is the organization's, in which the filter's dates are days. */
  readonly list: (tenant: Tenant, filter: RouteFilter, timeZone: string, page: PageRequest) => Effect.Effect<Page<DeliveryRoute>>
  /** The route's stops by position. */
  readonly stops: (tenant: Tenant, routeId: string) => Effect.Effect<ReadonlyArray<Stop>>
  readonly insertStops: (tenant: Tenant, routeId: RouteId, stops: ReadonlyArray<Stop>) => Effect.Effect<void>
  /** Writes a stop of the route; its position (see `setStopOrder`) and creation time never change. */
  readonly updateStop: (tenant: Tenant, routeId: RouteId, stop: Stop) => Effect.Effect<void>
  /** Removes a stop and moves the ones after it up by one; false when there was none. */
  readonly removeStop: (tenant: Tenant, routeId: string, stopId: string) => Effect.Effect<boolean>
  /** Gives the stops positions 1..n in the order of `stopIds` (every stop of the route, once). */
  readonly setStopOrder: (tenant: Tenant, routeId: string, stopIds: ReadonlyArray<string>, at: string) => Effect.Effect<void>
  /** The tenant's routes that use the vehicle and are neither COMPLETED nor CANCELLED, oldest first. */
  readonly unfinishedWithVehicle: (tenant: Tenant, vehicleId: string) => Effect.Effect<ReadonlyArray<RouteRecord>>
}>>()("@opsplatform/core/routes/RouteRepo") {
  static readonly layerSql: Layer.Layer<RouteRepo, never, SqlClient.SqlClient> = Layer.effect(
    RouteRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const records = tenantTable(sql, { name: "delivery_routes", row: RouteRow, fixed: ["number", "created_at"] })
      const routes = tenantTable(sql, {
        name: "delivery_routes",
        row: DeliveryRouteRow,
        select: (sql) =>
          sql`*, (SELECT count(*)::int FROM delivery_route_stops s WHERE s.route_id = delivery_routes.id) AS stop_count`
      })
      const stops = tenantTable(sql, { name: "delivery_route_stops", row: StopRow, fixed: ["route_id", "position", "created_at"] })
      const decodeNumber = Schema.decodeUnknownEffect(NumberRow)
      const findWith = (forUpdate: boolean) => (tenant: Tenant, id: string) =>
        routes.findById(tenant, id, { forUpdate })

      return RouteRepo.of({
        nextNumber: (tenant) =>
          orDie(sql`INSERT INTO delivery_route_numbers (organization_id, environment, last_number)
            VALUES (${tenant.organizationId}, ${tenant.environment}, 1)
            ON CONFLICT (organization_id, environment)
            DO UPDATE SET last_number = delivery_route_numbers.last_number + 1
            RETURNING last_number`).pipe(
            Effect.flatMap((rows) => Effect.orDie(decodeNumber(rows[0]))),
            Effect.map((row) => row.last_number)
          ),
        insert: (tenant, route) => orDie(records.insert(tenant, route)),
        update: (tenant, route) => orDie(records.update(tenant, route)).pipe(Effect.asVoid),
        find: findWith(false),
        // Locks the row first, then reads it with its stop count in a statement of its own: a
        // count read by the locking statement would be as of before the wait, stale once a
        // concurrent change of the route commits (two stops at one position).
        lock: (tenant, id) =>
          records.findById(tenant, id, { forUpdate: true }).pipe(
            Effect.flatMap((locked) => Option.isNone(locked) ? Effect.succeedNone : findWith(false)(tenant, id))
          ),
        list: (tenant, f, timeZone, page) =>
          routes.page(tenant, filterConditions(sql, RouteFilter, f, {
            date_from: (day) => sql`route_date >= ${dayRange(day, undefined, timeZone).from}::timestamptz`,
            date_to: (day) => {
              const before = dayRange(undefined, day, timeZone).before
              return before === undefined ? undefined : sql`route_date < ${before}::timestamptz`
            }
          }), page),
        stops: (tenant, routeId) =>
          stops.findAll(tenant, [sql`route_id = ${routeId}`], sql`position`).pipe(
            Effect.map((rows) => rows.map(withoutRoute))
          ),
        insertStops: (tenant, routeId, added) =>
          orDie(stops.insertAll(tenant, added.map((stop) => ({ ...stop, route_id: routeId })))),
        updateStop: (tenant, routeId, stop) =>
          orDie(stops.update(tenant, { ...stop, route_id: routeId }, [sql`route_id = ${routeId}`])).pipe(Effect.asVoid),
        removeStop: (tenant, routeId, stopId) =>
          Effect.gen(function*() {
            const removed = yield* stops.one(sql`DELETE FROM ${stops.name}
              WHERE ${stops.where(tenant, [sql`id = ${stopId}`, sql`route_id = ${routeId}`])} RETURNING *`)
            if (Option.isNone(removed)) return false
            yield* orDie(sql`UPDATE ${stops.name} SET position = position - 1
              WHERE ${stops.where(tenant, [sql`route_id = ${routeId}`, sql`position > ${removed.value.position}`])}`)
            return true
          }),
        setStopOrder: (tenant, routeId, stopIds, at) =>
          orDie(sql`UPDATE ${stops.name} s SET position = o.ord::int, updated_at = ${at}
            FROM jsonb_array_elements_text(${JSON.stringify(stopIds)}::jsonb) WITH ORDINALITY AS o(id, ord)
            WHERE ${
            stops.where(tenant, [sql`s.id = o.id::uuid`, sql`s.route_id = ${routeId}`, sql`s.position <> o.ord::int`])
          }`).pipe(Effect.asVoid),
        unfinishedWithVehicle: (tenant, vehicleId) =>
          records.findAll(
            tenant,
            [sql`vehicle_id = ${vehicleId}`, sql`status NOT IN ('COMPLETED', 'CANCELLED')`],
            sql`created_at, id`
          )
      })
    })
  )
}
