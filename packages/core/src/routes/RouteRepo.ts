import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie } from "../shared/sql.ts"
import { keysetPage } from "../shared/sqlPage.ts"
import type { Tenant } from "../shared/tenant.ts"
import { toIso, toIsoOrNull } from "../shared/time.ts"
import type { DeliveryRoute, RouteFilter, Stop } from "./model.ts"

/** A route as stored: everything but the derived stop count. */
export type RouteRecord = Omit<DeliveryRoute, "stop_count">

/**
 * Storage port for delivery routes and their stops. Stops keep a dense
 * `position` 1..n per route; removing one closes the gap. `lock` reads a route
 * and holds it until the transaction ends, so concurrent changes of one route
 * (a dispatch and its ordinal above all) run one after another.
 */
export class RouteRepo extends Context.Service<RouteRepo, {
  /** The next route number of the tenant (1, 2, ...); rolled back with its transaction. */
  readonly nextNumber: (tenant: Tenant) => Effect.Effect<number>
  readonly insert: (tenant: Tenant, route: RouteRecord) => Effect.Effect<void>
  readonly update: (tenant: Tenant, route: RouteRecord) => Effect.Effect<void>
  readonly find: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<DeliveryRoute>>
  readonly lock: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<DeliveryRoute>>
  readonly list: (tenant: Tenant, filter: RouteFilter, page: PageRequest) => Effect.Effect<Page<DeliveryRoute>>
  /** The route's stops by position. */
  readonly stops: (tenant: Tenant, routeId: string) => Effect.Effect<ReadonlyArray<Stop>>
  readonly insertStops: (tenant: Tenant, routeId: string, stops: ReadonlyArray<Stop>) => Effect.Effect<void>
  readonly updateStop: (tenant: Tenant, routeId: string, stop: Stop) => Effect.Effect<void>
  /** Removes a stop and moves the ones after it up by one; false when there was none. */
  readonly removeStop: (tenant: Tenant, routeId: string, stopId: string) => Effect.Effect<boolean>
  /** Gives the stops positions 1..n in the order of `stopIds` (every stop of the route, once). */
  readonly setStopOrder: (tenant: Tenant, routeId: string, stopIds: ReadonlyArray<string>, at: string) => Effect.Effect<void>
}>()("@opsplatform/core/routes/RouteRepo") {
  static readonly layerSql: Layer.Layer<RouteRepo, never, SqlClient.SqlClient> = Layer.effect(
    RouteRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v))
      const decode = (r: any): DeliveryRoute => ({
        id: r.id,
        number: r.number,
        name: r.name,
        status: r.status,
        route_date: toIso(r.route_date),
        start_location_id: r.start_location_id,
        start_address: r.start_address ?? null,
        start_latitude: Number(r.start_latitude),
        start_longitude: Number(r.start_longitude),
        round_trip: r.round_trip,
        vehicle_id: r.vehicle_id,
        driver_id: r.driver_id,
        capacity_kg: num(r.capacity_kg),
        capacity_parcels: num(r.capacity_parcels),
        total_distance_km: num(r.total_distance_km),
        total_duration_minutes: num(r.total_duration_minutes),
        optimized_at: toIsoOrNull(r.optimized_at),
        optimizer: r.optimizer,
        dispatched_at: toIsoOrNull(r.dispatched_at),
        started_at: toIsoOrNull(r.started_at),
        completed_at: toIsoOrNull(r.completed_at),
        cancelled_at: toIsoOrNull(r.cancelled_at),
        gate_visit_id: r.gate_visit_id,
        notes: r.notes,
        stop_count: Number(r.stop_count),
        dispatch_count: Number(r.dispatch_count),
        created_at: toIso(r.created_at),
        updated_at: toIso(r.updated_at)
      })
      const decodeStop = (r: any): Stop => ({
        id: r.id,
        position: Number(r.position),
        label: r.label,
        address: r.address ?? null,
        latitude: Number(r.latitude),
        longitude: Number(r.longitude),
        parcels: Number(r.parcels),
        weight_kg: Number(r.weight_kg),
        service_minutes: Number(r.service_minutes),
        window_start: r.window_start,
        window_end: r.window_end,
        notes: r.notes,
        created_at: toIso(r.created_at),
        updated_at: toIso(r.updated_at)
      })
      const tenantIs = (t: Tenant) => sql`organization_id = ${t.organizationId} AND environment = ${t.environment}`
      const withStopCount = sql`*, (SELECT count(*)::int FROM delivery_route_stops s WHERE s.route_id = delivery_routes.id)
        AS stop_count`
      const json = (value: unknown) => (value === null ? null : JSON.stringify(value))
      const findWith = (lock: boolean) => (tenant: Tenant, id: string) =>
        orDie(sql`SELECT ${withStopCount} FROM delivery_routes WHERE id = ${id} AND ${tenantIs(tenant)}
          ${lock ? sql`FOR UPDATE OF delivery_routes` : sql``}`).pipe(
          Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), decode))
        )

      return RouteRepo.of({
        nextNumber: (tenant) =>
          orDie(sql`INSERT INTO delivery_route_numbers (organization_id, environment, last_number)
            VALUES (${tenant.organizationId}, ${tenant.environment}, 1)
            ON CONFLICT (organization_id, environment)
            DO UPDATE SET last_number = delivery_route_numbers.last_number + 1
            RETURNING last_number`).pipe(Effect.map((rows) => Number((rows[0] as any).last_number))),
        insert: (tenant, r) =>
          orDie(sql`INSERT INTO delivery_routes (id, organization_id, environment, number, name, status, route_date,
              start_location_id, start_address, start_latitude, start_longitude, round_trip, vehicle_id, driver_id,
              capacity_kg, capacity_parcels, total_distance_km, total_duration_minutes, optimized_at, optimizer,
              dispatched_at, started_at, completed_at, cancelled_at, gate_visit_id, notes, dispatch_count,
              created_at, updated_at)
            VALUES (${r.id}, ${tenant.organizationId}, ${tenant.environment}, ${r.number}, ${r.name}, ${r.status},
              ${r.route_date}, ${r.start_location_id}, ${json(r.start_address)}::jsonb, ${r.start_latitude},
              ${r.start_longitude}, ${r.round_trip}, ${r.vehicle_id}, ${r.driver_id}, ${r.capacity_kg},
              ${r.capacity_parcels}, ${r.total_distance_km}, ${r.total_duration_minutes}, ${r.optimized_at},
              ${r.optimizer}, ${r.dispatched_at}, ${r.started_at}, ${r.completed_at}, ${r.cancelled_at},
              ${r.gate_visit_id}, ${r.notes}, ${r.dispatch_count}, ${r.created_at}, ${r.updated_at})`).pipe(
            Effect.asVoid
          ),
        update: (tenant, r) =>
          orDie(sql`UPDATE delivery_routes SET name = ${r.name}, status = ${r.status}, route_date = ${r.route_date},
              start_location_id = ${r.start_location_id}, start_address = ${json(r.start_address)}::jsonb,
              start_latitude = ${r.start_latitude}, start_longitude = ${r.start_longitude}, round_trip = ${r.round_trip},
              vehicle_id = ${r.vehicle_id}, driver_id = ${r.driver_id}, capacity_kg = ${r.capacity_kg},
              capacity_parcels = ${r.capacity_parcels}, total_distance_km = ${r.total_distance_km},
              total_duration_minutes = ${r.total_duration_minutes}, optimized_at = ${r.optimized_at},
              optimizer = ${r.optimizer}, dispatched_at = ${r.dispatched_at}, started_at = ${r.started_at},
              completed_at = ${r.completed_at}, cancelled_at = ${r.cancelled_at}, gate_visit_id = ${r.gate_visit_id},
              notes = ${r.notes}, dispatch_count = ${r.dispatch_count}, updated_at = ${r.updated_at}
            WHERE id = ${r.id} AND ${tenantIs(tenant)}`).pipe(Effect.asVoid),
        find: findWith(false),
        lock: findWith(true),
        list: (tenant, f, page) =>
          keysetPage(sql, {
            table: "delivery_routes",
            select: withStopCount,
            where: sql.and([
              tenantIs(tenant),
              f.status === undefined ? sql`TRUE` : sql`status = ${f.status}`,
              f.routeDateFrom === undefined ? sql`TRUE` : sql`route_date >= ${f.routeDateFrom}::timestamptz`,
              f.routeDateBefore === undefined ? sql`TRUE` : sql`route_date < ${f.routeDateBefore}::timestamptz`
            ]),
            page,
            decode
          }),
        stops: (tenant, routeId) =>
          orDie(sql`SELECT * FROM delivery_route_stops WHERE route_id = ${routeId} AND ${tenantIs(tenant)}
            ORDER BY position`).pipe(Effect.map((rows) => rows.map(decodeStop))),
        insertStops: (tenant, routeId, stops) =>
          stops.length === 0 ? Effect.void : orDie(sql`INSERT INTO delivery_route_stops (id, route_id, organization_id,
              environment, position, label, address, latitude, longitude, parcels, weight_kg, service_minutes,
              window_start, window_end, notes, created_at, updated_at)
            SELECT x.id, ${routeId}, ${tenant.organizationId}, ${tenant.environment}, x.position, x.label, x.address,
              x.latitude, x.longitude, x.parcels, x.weight_kg, x.service_minutes, x.window_start, x.window_end,
              x.notes, x.created_at, x.updated_at
            FROM jsonb_to_recordset(${JSON.stringify(stops)}::jsonb) AS x(id uuid, position int, label text,
              address jsonb, latitude double precision, longitude double precision, parcels int,
              weight_kg numeric, service_minutes int, window_start text, window_end text, notes text,
              created_at timestamptz, updated_at timestamptz)`).pipe(Effect.asVoid),
        updateStop: (tenant, routeId, s) =>
          orDie(sql`UPDATE delivery_route_stops SET label = ${s.label}, address = ${json(s.address)}::jsonb,
              latitude = ${s.latitude}, longitude = ${s.longitude}, parcels = ${s.parcels},
              weight_kg = ${s.weight_kg}, service_minutes = ${s.service_minutes}, window_start = ${s.window_start},
              window_end = ${s.window_end}, notes = ${s.notes}, updated_at = ${s.updated_at}
            WHERE id = ${s.id} AND route_id = ${routeId} AND ${tenantIs(tenant)}`).pipe(Effect.asVoid),
        removeStop: (tenant, routeId, stopId) =>
          Effect.gen(function*() {
            const removed = yield* orDie(sql`DELETE FROM delivery_route_stops
              WHERE id = ${stopId} AND route_id = ${routeId} AND ${tenantIs(tenant)} RETURNING position`)
            if (removed.length === 0) return false
            yield* orDie(sql`UPDATE delivery_route_stops SET position = position - 1
              WHERE route_id = ${routeId} AND ${tenantIs(tenant)} AND position > ${(removed[0] as any).position}`)
            return true
          }),
        setStopOrder: (tenant, routeId, stopIds, at) =>
          orDie(sql`UPDATE delivery_route_stops s SET position = o.ord::int, updated_at = ${at}
            FROM jsonb_array_elements_text(${JSON.stringify(stopIds)}::jsonb) WITH ORDINALITY AS o(id, ord)
            WHERE s.id = o.id::uuid AND s.route_id = ${routeId}
              AND s.organization_id = ${tenant.organizationId} AND s.environment = ${tenant.environment}
              AND s.position <> o.ord::int`).pipe(Effect.asVoid)
      })
    })
  )
}
