import { Context, Effect, Layer } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { orDie } from "../shared/sql.ts"
import type { Tenant, TenantScoped } from "../shared/tenant.ts"
import { type BucketSum, instantMeasures, type Measure, type Query } from "./pulse/figures.ts"

/** Deltas the pulse job folds per statement. */
export const COMPACT_BATCH = 5_000

/**
 * Read-only aggregates behind the pulse, and the folding of its rollups.
 * Each figure is one SQL statement that groups the tenant's rows by the bucket
 * their date falls in (`width_bucket` over the query's boundaries), by
 * currency and exchange rate, adding integers only. A `flow` query reads only
 * rows inside the boundaries; the others read the whole state and let the
 * caller fold what lies outside.
 *
 * Money figures read the daily rollups the database keeps for them
 * (`pulse_days` and the `pulse_deltas` not folded yet, in one statement, so
 * the figure is exact at every commit; migration 0012); counts of obligations
 * and routes read their tables.
 */
export class PulseRepo extends Context.Service<PulseRepo, TenantScoped<{
  readonly sums: (tenant: Tenant, query: Query) => Effect.Effect<ReadonlyArray<BucketSum>>
  /**
   * Folds up to `limit` deltas into the daily rows; how many it folded.
   * Cross-tenant: the job folds every tenant's deltas in the order they were written.
   */
  readonly compact: (limit: number) => Effect.Effect<number>
}, "compact">>()("@opsplatform/core/display/PulseRepo") {
  static readonly layerSql: Layer.Layer<PulseRepo, never, SqlClient.SqlClient> = Layer.effect(
    PulseRepo,
    Effect.map(SqlClient.SqlClient, (sql) => {
      /** The tables counted live: their rows, aliased `t`, the date they are bucketed by, and which count. */
      const counted: Partial<Record<Measure, { readonly from: Statement.Fragment; readonly date: Statement.Fragment; readonly where: Statement.Fragment }>> = {
        obligations_pending: { from: sql`contract_obligations t`, date: sql`t.due_date`, where: sql`t.status = 'pending'` },
        obligations_due: { from: sql`contract_obligations t`, date: sql`t.due_date`, where: sql`t.status <> 'cancelled'` },
        routes_scheduled: { from: sql`delivery_routes t`, date: sql`t.route_date`, where: sql`t.status <> 'CANCELLED'` },
        routes_in_progress: { from: sql`delivery_routes t`, date: sql`t.route_date`, where: sql`t.status = 'IN_PROGRESS'` },
        routes_completed: {
          from: sql`delivery_routes t`,
          date: sql`t.completed_at`,
          where: sql`t.status = 'COMPLETED' AND t.completed_at IS NOT NULL`
        },
        vehicles_active: { from: sql`fleet_vehicles t`, date: sql`t.created_at`, where: sql`t.active` }
      }
      type Row = { readonly bucket: number; readonly currency: string; readonly rate: string | null; readonly minor: string; readonly n: number }
      const decode = (rows: ReadonlyArray<Row>) =>
        rows.map((r): BucketSum => ({
          bucket: Number(r.bucket),
          currency: r.currency,
          rate: r.rate,
          minor: r.minor,
          count: Number(r.n)
        }))

      return PulseRepo.of({
        sums: (tenant, query) => {
          const type = instantMeasures.has(query.measure) ? sql.literal("timestamptz") : sql.literal("date")
          const bounds = query.boundaries.map((b) => sql`${b}::${type}`)
          const array = sql`ARRAY[${sql.join(", ", false)(bounds)}]`
          // A flow counts what happened within the periods; a stock, everything up to their end.
          const within = (date: Statement.Fragment) =>
            query.mode === "flow" ? [sql`${date} >= ${bounds[0]!}`, sql`${date} < ${bounds[bounds.length - 1]!}`] : []
          const live = counted[query.measure]
          if (live !== undefined) {
            return orDie(sql<Row>`SELECT width_bucket(${live.date}, ${array}) AS bucket, '' AS currency, NULL::text AS rate,
                '0' AS minor, count(*)::int AS n
              FROM ${live.from}
              WHERE ${sql.and([
                sql`t.organization_id = ${tenant.organizationId}`,
                sql`t.environment = ${tenant.environment}`,
                live.where,
                ...within(live.date)
              ])}
              GROUP BY 1`).pipe(Effect.map(decode))
          }
          const rows = (table: string) =>
            sql`SELECT day, currency, rate, minor, count FROM ${sql(table)}
              WHERE ${sql.and([
                sql`organization_id = ${tenant.organizationId}`,
                sql`environment = ${tenant.environment}`,
                sql`measure = ${query.measure}`,
                ...within(sql`day`)
              ])}`
          return orDie(sql<Row>`SELECT width_bucket(r.day, ${array}) AS bucket, r.currency, NULLIF(r.rate, '') AS rate,
              SUM(r.minor)::text AS minor, SUM(r.count)::int AS n
            FROM (${rows("pulse_days")} UNION ALL ${rows("pulse_deltas")}) AS r
            GROUP BY 1, 2, 3
            HAVING SUM(r.minor) <> 0 OR SUM(r.count) <> 0`).pipe(Effect.map(decode))
        },
        // Claims the oldest deltas (SKIP LOCKED: another process folds the next ones), deletes them
        // and adds them to their days, in one statement: nothing is folded twice or lost.
        compact: (limit) =>
          orDie(sql<{ readonly moved: number }>`WITH claimed AS (
              SELECT id FROM pulse_deltas ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED
            ), moved AS (
              DELETE FROM pulse_deltas d USING claimed c WHERE d.id = c.id
              RETURNING d.organization_id, d.environment, d.measure, d.day, d.currency, d.rate, d.minor, d.count
            ), folded AS (
              INSERT INTO pulse_days (organization_id, environment, measure, day, currency, rate, minor, count)
              SELECT organization_id, environment, measure, day, currency, rate, SUM(minor), SUM(count)
              FROM moved GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
              ON CONFLICT (organization_id, environment, measure, day, currency, rate) DO UPDATE SET
                minor = pulse_days.minor + EXCLUDED.minor, count = pulse_days.count + EXCLUDED.count
              RETURNING 1
            )
            SELECT count(*)::int AS moved FROM moved`).pipe(Effect.map((rows) => Number(rows[0]?.moved ?? 0)))
      })
    })
  )
}
