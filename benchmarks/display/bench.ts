/**
 * The pulse assistant on an organization with 100 000 invoices (about 60 000
 * payments) and 100 000 expenses, in process through the core services (target:
 * p99 under 50 ms per answer). For each question, three measurements in the
 * same run on the same database:
 *
 * 1. `Display.ask`: the whole answer as the endpoint gets it — rate limit,
 *    intent, the organization's day, the SQL aggregates, the sentence, the audit row.
 * 2. `Pulse.answer`: the same without the rate limit and the audit row.
 * 3. Baseline: the aggregate statement alone (`PulseRepo.sums` with the plan
 *    precomputed) — the floor the engine adds its work to.
 *
 * And, for context, what the rollups replace: the collected figure summed from
 * the payment rows themselves; and the approach aggregates replace: loading the
 * tenant's open invoices and summing them in JavaScript.
 *
 *   DATABASE_URL=postgres://... npx tsx --conditions source benchmarks/display/bench.ts
 *   (without DATABASE_URL it uses an in-memory PGlite)
 */
import { Clock, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Display, Pulse, PulseFigures, PulseIntents, PulseRepo, PulseRollups, Tenancy, Time } from "@opsplatform/core"
import type { AuthModel } from "@opsplatform/core"
import { openBenchCore } from "../support/core.ts"

const INVOICES = Number(process.env.BENCH_INVOICES ?? 100_000)
const EXPENSES = Number(process.env.BENCH_EXPENSES ?? 100_000)
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 300)
const ZONE = "Europe/Bucharest"
const { close, database, run } = await openBenchCore()

// ---- Seed: one organization, every row in a few set-based statements ----------

const today = Time.localDate(Date.now(), ZONE)
const seedStart = performance.now()
const tenant = await run(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const org = yield* (yield* Tenancy.Tenancy).createOrganization({ name: "Pulse bench", time_zone: ZONE })
  const contact = crypto.randomUUID()
  yield* sql`INSERT INTO contacts (id, organization_id, environment, name, kind, country, created_at, updated_at)
    VALUES (${contact}, ${org.id}, 'live', 'Bench client', 'customer', 'RO', now(), now())`
  // Two years of invoices, 1 in 5 in EUR. The last 90 days: 8 in 20 paid, 4 partly paid, 6 sent, 1 credited,
  // 1 draft; older ones are paid but for 1 in 100 still sent, 1 partly paid, 1 credited and 1 draft.
  yield* sql`INSERT INTO invoices (id, organization_id, environment, contact_id, status, series, number, currency,
      issue_date, due_date, exchange_rate_ron, lines, subtotal_minor, vat_minor, total_minor, credited_minor, paid_minor,
      issued_at, created_at, updated_at)
    SELECT gen_random_uuid(), ${org.id}, 'live', ${contact}, s.status, 'BEN', CASE WHEN s.status = 'DRAFT' THEN NULL ELSE 'BEN-' || i END,
      s.currency, CASE WHEN s.status = 'DRAFT' THEN NULL ELSE s.issue END, CASE WHEN s.status = 'DRAFT' THEN NULL ELSE s.issue + 14 END,
      CASE WHEN s.currency = 'EUR' THEN '4.9763' END, '[]'::jsonb, s.total, 0, s.total,
      CASE WHEN s.status = 'CREDITED' THEN s.total ELSE 0 END,
      CASE s.status WHEN 'PAID' THEN s.total WHEN 'PARTIALLY_PAID' THEN s.total / 2 ELSE 0 END,
      now(), now() - make_interval(secs => i), now() - make_interval(secs => i)
    FROM generate_series(1, ${INVOICES}) AS i,
      LATERAL (SELECT ${today}::date - (i % 730) AS issue, 10000 + (i * 7919) % 500000 AS total,
        CASE WHEN i % 5 = 0 THEN 'EUR' ELSE 'RON' END AS currency,
        CASE WHEN i % 730 <= 90 THEN
          CASE WHEN i % 20 < 8 THEN 'PAID' WHEN i % 20 < 12 THEN 'PARTIALLY_PAID' WHEN i % 20 < 18 THEN 'SENT'
            WHEN i % 20 = 18 THEN 'CREDITED' ELSE 'DRAFT' END
        ELSE
          CASE i % 100 WHEN 0 THEN 'SENT' WHEN 1 THEN 'PARTIALLY_PAID' WHEN 2 THEN 'CREDITED' WHEN 3 THEN 'DRAFT' ELSE 'PAID' END
        END AS status) AS s`
  yield* sql`INSERT INTO invoice_payments (id, organization_id, environment, invoice_id, amount_minor, payment_date, method,
      reference, source, created_at)
    SELECT gen_random_uuid(), organization_id, environment, id, paid_minor,
      LEAST(issue_date + (abs(hashtext(id::text)) % 30), ${today}::date), 'BANK_TRANSFER', '', 'manual', now()
    FROM invoices WHERE organization_id = ${org.id} AND paid_minor > 0`
  yield* sql`INSERT INTO expenses (id, organization_id, environment, description, category, status, amount, currency,
      expense_date, created_at, updated_at)
    SELECT gen_random_uuid(), ${org.id}, 'live', 'Bench expense ' || i, 'other',
      (ARRAY['draft', 'submitted', 'approved', 'rejected', 'paid'])[1 + i % 5], 1 + (i % 100000) / 100.0,
      CASE WHEN i % 10 = 0 THEN 'EUR' ELSE 'RON' END, ${today}::date - (i % 730), now(), now()
    FROM generate_series(1, ${EXPENSES}) AS i`
  // The rows' deltas folded into their days, as the pulse job does every 10 s in `serve`.
  const folding = performance.now()
  const { folded } = yield* (yield* PulseRollups.PulseRollups).compact
  console.error(`folded ${folded} deltas in ${((performance.now() - folding) / 1000).toFixed(1)} s`)
  // The steady state autovacuum keeps a table in: statistics and a visibility map.
  for (const table of ["invoices", "invoice_payments", "expenses", "pulse_days", "pulse_deltas"]) {
    yield* sql`VACUUM ANALYZE ${sql(table)}`
  }
  const [{ n }] = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM invoice_payments WHERE organization_id = ${org.id}`
  console.error(`seeded ${INVOICES} invoices, ${n} payments, ${EXPENSES} expenses in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`)
  return { organizationId: org.id, environment: "live" as const }
}))

// ---- Measure ------------------------------------------------------------------

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!
const round = (x: number) => Number(x.toFixed(2))
const summary = (samples: Array<number>) => {
  samples.sort((a, b) => a - b)
  return { p50: round(percentile(samples, 0.5)), p99: round(percentile(samples, 0.99)), avg: round(samples.reduce((a, b) => a + b, 0) / samples.length) }
}
const timed = async (body: () => Promise<unknown>) => {
  const start = performance.now()
  await body()
  return performance.now() - start
}

/** A caller per question, so the rate limit (20 a minute per credential) never refuses the benchmark. */
const caller = (): Display.DisplayCaller => ({
  principal: {
    kind: "api_key",
    credentialId: crypto.randomUUID() as AuthModel.Principal["credentialId"],
    organizationId: tenant.organizationId,
    environment: "live",
    scopes: new Set(["display:assistant"]),
    userId: null,
    deviceId: null,
    appId: null
  },
  requestId: "req_bench"
})

const questions = [
  "cât am încasat luna asta?",
  "how many invoices are overdue?",
  "what is our open balance?",
  "how much did we invoice last month?",
  "cât am cheltuit luna asta?",
  "câte rute avem azi?"
]
// Every measurement of every question takes its turn in each round, so a burst of load on the shared
// machine falls on all of them alike rather than on whichever ran during it.
const cases = questions.map((text) => {
  const intent = PulseIntents.matchIntent(text)!
  const plan = PulseFigures.planFor(intent, Time.localDate(Date.now(), ZONE), ZONE)
  return {
    text,
    ask: () => run(Effect.flatMap(Display.Display, (d) => d.ask(caller(), { text }))),
    engine: () => run(Effect.flatMap(Pulse.Pulse, (p) => p.answer(tenant, text, "ro"))),
    floor: () => run(Effect.flatMap(PulseRepo.PulseRepo, (r) => r.sums(tenant, plan.series))),
    samples: { ask: [] as Array<number>, engine: [] as Array<number>, floor: [] as Array<number> }
  }
})
for (let i = 0; i < 20; i++) {
  for (const c of cases) {
    await c.ask()
    await c.engine()
    await c.floor()
  }
}
for (let i = 0; i < ITERATIONS; i++) {
  for (const c of cases) {
    c.samples.ask.push(await timed(c.ask))
    c.samples.engine.push(await timed(c.engine))
    c.samples.floor.push(await timed(c.floor))
  }
}
const rows = []
for (const c of cases) {
  const answer = await run(Effect.flatMap(Pulse.Pulse, (p) => p.answer(tenant, c.text, "en")))
  rows.push({
    question: c.text,
    kpi: answer.kpi?.id,
    value: answer.kpi?.value.minor,
    count: answer.kpi?.count,
    ask: summary(c.samples.ask),
    engine: summary(c.samples.engine),
    floor: summary(c.samples.floor)
  })
}

// What the rollups replace: the same figure (collected this month, 7 months of spark) summed from the
// payment rows themselves, joined to the invoices in another currency for their rate.
const collectedPlan = PulseFigures.planFor(PulseIntents.matchIntent(questions[0]!)!, Time.localDate(Date.now(), ZONE), ZONE)
const scanSamples: Array<number> = []
for (let i = 0; i < Math.max(10, Math.floor(ITERATIONS / 5)); i++) {
  scanSamples.push(await timed(() =>
    run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const b = collectedPlan.series.boundaries
      return yield* sql`SELECT width_bucket(t.payment_date, ARRAY[${sql.join(", ", false)(b.map((d) => sql`${d}::date`))}]) AS bucket,
          COALESCE(i.currency, 'RON') AS currency, i.exchange_rate_ron AS rate, SUM(t.amount_minor)::text AS minor, count(*)::int AS n
        FROM invoice_payments t LEFT JOIN invoices i ON i.id = t.invoice_id AND i.currency <> 'RON'
        WHERE t.organization_id = ${tenant.organizationId} AND t.environment = 'live' AND t.reversal_id IS NULL
          AND t.payment_date >= ${b[0]!}::date AND t.payment_date < ${b[b.length - 1]!}::date
        GROUP BY 1, 2, 3`
    }))))
}
const scan = summary(scanSamples)

// The approach the aggregates replace: every open invoice of the tenant loaded and summed in JavaScript.
const naiveSamples: Array<number> = []
for (let i = 0; i < Math.max(10, Math.floor(ITERATIONS / 10)); i++) naiveSamples.push(await timed(() => run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const open = yield* sql<{ readonly total_minor: string; readonly credited_minor: string; readonly paid_minor: string; readonly due_date: Date; readonly currency: string; readonly exchange_rate_ron: string | null }>`
      SELECT total_minor, credited_minor, paid_minor, due_date, currency, exchange_rate_ron FROM invoices
      WHERE organization_id = ${tenant.organizationId} AND environment = 'live' AND status IN ('SENT', 'PARTIALLY_PAID')`
    const now = yield* Clock.currentTimeMillis
    const day = Time.localDate(now, ZONE)
    let minor = 0
    for (const i of open) {
      if (Time.toDateString(i.due_date) >= day) continue
      minor += Math.max(0, Number(i.total_minor) - Number(i.credited_minor) - Number(i.paid_minor)) * Number(i.exchange_rate_ron ?? 1)
    }
    return Math.round(minor)
  }))))
const naive = summary(naiveSamples)

console.log(JSON.stringify({ database: database._tag, invoices: INVOICES, expenses: EXPENSES, iterations: ITERATIONS, rows, collectedFromRows: scan, naiveOverdue: naive }, null, 2))
await close()
