/**
 * Obligation lists filtered by bucket, and one monitor pass, on one database in one run.
 *
 * 1. `Obligations.list` with `bucket=overdue` (the bucket is a SQL predicate with the
 *    organization's today as a parameter) against the approach it replaces: load the
 *    tenant's obligations and derive the bucket in JavaScript, then page.
 * 2. A monitor pass sending N notices (claim + notification row per notice, batches of
 *    200) against the floor for the same writes: one UPDATE of N markers and one INSERT of
 *    N notification rows, without claiming.
 *
 *   DATABASE_URL=postgres://... npx tsx --conditions source benchmarks/obligations/bench.ts
 *   (without DATABASE_URL it uses an in-memory PGlite)
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Contracts, ObligationMonitor, ObligationRules, Obligations, Pagination, Tenancy } from "@opsplatform/core"
import { openBenchCore } from "../support/core.ts"

const rows = Number(process.env.BENCH_ROWS ?? 20_000)
const iterations = Number(process.env.BENCH_ITERATIONS ?? 100)
const notices = Number(process.env.BENCH_NOTICES ?? 2_000)
const { close, database, run } = await openBenchCore()

/** A fresh organization with one contract and `count` obligations inserted in one statement. */
const seed = (count: number, dueFrom: string, spreadDays: number, name: string) =>
  run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const org = yield* (yield* Tenancy.Tenancy).createOrganization({ name, time_zone: "Europe/Bucharest" })
    yield* (yield* Tenancy.Tenancy).updateSettings(org.id, { escalation_delay_days: 0 })
    const tenant = { organizationId: org.id, environment: "live" as const }
    const contract = yield* (yield* Contracts.Contracts).create(tenant, { name: "Bench" })
    yield* sql`INSERT INTO contract_obligations (id, organization_id, environment, contract_id, title, type, due_date,
        recurrence, recurrence_anchor_day, remind_days_before, status, obligor, created_at, updated_at)
      SELECT gen_random_uuid(), ${org.id}, 'live', ${contract.id}, 'Obligation ' || i, 'payment',
        ${dueFrom}::date + (i % ${spreadDays}), 'none', 1, 7,
        CASE WHEN i % 10 = 0 THEN 'completed' ELSE 'pending' END, 'us',
        now() - make_interval(secs => i), now() - make_interval(secs => i)
      FROM generate_series(1, ${count}) AS i`
    return tenant
  }))

const time = async (label: string, n: number, body: () => Promise<unknown>) => {
  for (let i = 0; i < Math.min(10, n); i++) await body()
  const start = performance.now()
  for (let i = 0; i < n; i++) await body()
  const ms = (performance.now() - start) / n
  return { label, ms: Number(ms.toFixed(3)) }
}

// 1. Bucket filter in SQL against loading and filtering in JavaScript.
const today = ObligationRules.localDate(Date.now(), "Europe/Bucharest")
const tenant = await seed(rows, ObligationRules.addDays(today, -730), 1460, "Bucket bench")
const page = await run(Pagination.pageRequest({ perPage: 25 }))
const inSql = await time("list bucket=overdue (SQL predicate)", iterations, () =>
  run(Effect.flatMap(Obligations.Obligations, (o) => o.list(tenant, { bucket: "overdue" }, page))))
const loadAll = await time("load the tenant, derive buckets in JS, page", Math.max(5, Math.floor(iterations / 10)), () =>
  run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const all = yield* sql`SELECT id, status, to_char(due_date, 'YYYY-MM-DD') AS due_date, remind_days_before, created_at
      FROM contract_obligations WHERE organization_id = ${tenant.organizationId} AND environment = 'live'`
    const day = ObligationRules.localDate(Date.now(), "Europe/Bucharest")
    const overdue = all.filter((r: any) => ObligationRules.deriveBucket(r, day) === "overdue")
    overdue.sort((a: any, b: any) => (b.created_at as Date).getTime() - (a.created_at as Date).getTime())
    return overdue.slice(0, 25)
  })))

// 2. A monitor pass against the bare writes it makes.
const monitorTenant = await seed(notices, "2020-01-01", 300, "Monitor bench")
const pass = await (async () => {
  const start = performance.now()
  const summary = await run(Effect.flatMap(ObligationMonitor.ObligationMonitor, (m) => m.run({ organizationId: monitorTenant.organizationId })))
  return { label: "monitor pass", ms: Number((performance.now() - start).toFixed(1)), sent: summary.notices.length }
})()
const floorTenant = await seed(notices, "2020-01-01", 300, "Floor bench")
const floor = await (async () => {
  const start = performance.now()
  await run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`UPDATE contract_obligations SET overdue_notified_at = now(), escalated_at = now()
        WHERE organization_id = ${floorTenant.organizationId} AND status = 'pending'`
      yield* sql`INSERT INTO notifications (id, organization_id, environment, kind, subject_id, due_date, created_at)
        SELECT gen_random_uuid(), organization_id, environment, k, id, due_date, now()
        FROM contract_obligations, unnest(ARRAY['contract_obligation.overdue', 'contract_obligation.escalation']) AS k
        WHERE organization_id = ${floorTenant.organizationId} AND status = 'pending'`
    }))
  }))
  return { label: "bare UPDATE + INSERT of the same notices", ms: Number((performance.now() - start).toFixed(1)) }
})()

console.log(JSON.stringify({
  database: database._tag,
  rows,
  list: [inSql, loadAll, { ratio: Number((loadAll.ms / inSql.ms).toFixed(1)) }],
  monitor: [pass, floor, { ratio: Number((pass.ms / floor.ms).toFixed(1)) }]
}, null, 2))
await close()
