/**
 * Fills a PostgreSQL database with years of data for the list benchmarks:
 * one large organization and `SEED_ORGS` smaller ones, each row a copy of a
 * template made through the real API (so every stored form — JSON lines,
 * addresses, numbers — is one the server wrote), multiplied with set-based
 * `INSERT … SELECT … FROM generate_series` statements.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/perf npx tsx --conditions source benchmarks/seed/seed.ts
 *
 * Sizes (environment): SEED_BIG rows per table in the large organization
 * (default 1 000 000), SEED_ORGS other organizations (50) with SEED_SMALL rows
 * per table each (4 000). Per organization it writes routes with one stop
 * each, obligations (one contract per 1 000), invoices (one contact per 100)
 * with a payment for each paid one, expenses, and webhook deliveries with
 * their outbox event and one attempt. The display's rollup triggers are off
 * while copying: the rollups are not what these benchmarks read.
 *
 * The organizations, their API keys and the ids the benchmarks address are
 * written to `benchmarks/seed/state.json` (ignored by git).
 */
import { Context, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { writeFileSync } from "node:fs"
import { makeFixture } from "@opsplatform/testing"
import { callApi, startBenchServer } from "../support/server.ts"

const big = Number(process.env.SEED_BIG ?? 1_000_000)
const small = Number(process.env.SEED_SMALL ?? 4_000)
const others = Number(process.env.SEED_ORGS ?? 50)
if (!process.env.DATABASE_URL) throw new Error("Set DATABASE_URL: the seed fills a PostgreSQL database")

const { close, context, port, run } = await startBenchServer()
const sql = Context.get(context, SqlClient.SqlClient)
const q = (text: string, params: ReadonlyArray<unknown> = []) => run(sql.unsafe(text, params as Array<unknown>))

const api = (token: string, method: string, path: string, body?: unknown) => callApi(port, token, method, path, body)

/** Templates of every seeded row, made through the API in the first organization. */
const templates = async (token: string) => {
  const route = await api(token, "POST", "/v1/delivery-routes", {
    name: "Template route",
    route_date: "2026-03-02T07:00:00+02:00",
    start_latitude: 44.49,
    start_longitude: 26.17,
    stops: [{ label: "Template stop", latitude: 44.43, longitude: 26.1 }]
  })
  const contract = await api(token, "POST", "/v1/contracts", { name: "Template contract" })
  const obligation = await api(token, "POST", "/v1/contract-obligations", {
    contract_id: contract.id,
    title: "Template obligation",
    type: "report",
    due_date: "2099-01-31"
  })
  const contact = await api(token, "POST", "/v1/contacts", { name: "Template customer", kind: "customer" })
  const invoice = await api(token, "POST", "/v1/invoices", {
    contact_id: contact.id,
    currency: "RON",
    lines: [{ description: "Transport", quantity: "1", unit_price: "100", vat_rate: 21 }]
  })
  await api(token, "POST", `/v1/invoices/${invoice.id}/issue`, { series: "TPL" })
  const payment = await api(token, "POST", `/v1/invoices/${invoice.id}/payments`, {
    amount: "121.00",
    payment_date: "2026-03-02",
    method: "BANK_TRANSFER"
  })
  const expense = await api(token, "POST", "/v1/expenses", {
    description: "Fuel",
    category: "other",
    amount: "250.00",
    currency: "RON",
    expense_date: "2026-03-02"
  })
  const webhook = await api(token, "POST", "/v1/webhooks", {
    url: "https://hooks.example.com/seed",
    event_types: ["delivery_route.dispatched"]
  })
  return {
    route: route.id as string,
    stop: route.stops[0].id as string,
    contract: contract.id as string,
    obligation: obligation.id as string,
    contact: contact.id as string,
    invoice: invoice.id as string,
    payment: payment.id as string,
    expense: expense.id as string,
    webhook: webhook.id as string
  }
}

const columnsOf = new Map<string, ReadonlyArray<string>>()
const columns = async (table: string) => {
  const known = columnsOf.get(table)
  if (known !== undefined) return known
  const rows = await q(
    `SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position`,
    [table]
  ) as ReadonlyArray<{ column_name: string }>
  const names = rows.map((r) => r.column_name)
  columnsOf.set(table, names)
  return names
}

/**
 * Copies the template row `templateId` of `table` once per row of `from`
 * (which names its rows `g`), every column as in the template (`t.`) unless
 * `set` gives an expression for it.
 */
const copy = async (table: string, templateId: string, from: string, set: Record<string, string>) => {
  const names = await columns(table)
  const select = names.map((c) => set[c] ?? `t.${c}`).join(", ")
  await q(`INSERT INTO ${table} (${names.join(", ")}) SELECT ${select} FROM ${from}, ${table} t WHERE t.id = '${templateId}'`)
}

/** `created_at` of the n-th newest row: one every 30 seconds back from now. */
const age = (n: string) => `(now() - (${n}) * interval '30 seconds')`

const fill = async (tpl: Awaited<ReturnType<typeof templates>>, org: string, n: number) => {
  const owner = { organization_id: `'${org}'::uuid`, environment: `'live'` }
  const series = `generate_series(1, ${n}) AS g(i)`
  // Routes: the newest 2 % still open, the rest completed (one in twenty cancelled).
  await copy("delivery_routes", tpl.route, series, {
    ...owner,
    id: "gen_random_uuid()",
    number: `'S-' || g.i`,
    name: `'Route ' || g.i`,
    status: `CASE WHEN g.i <= ${Math.ceil(n * 0.02)} THEN (ARRAY['DRAFT','PLANNED','DISPATCHED'])[1 + g.i % 3]
      WHEN g.i % 20 = 0 THEN 'CANCELLED' ELSE 'COMPLETED' END`,
    route_date: `${age("g.i")} + interval '1 day'`,
    completed_at: `CASE WHEN g.i > ${Math.ceil(n * 0.02)} AND g.i % 20 <> 0 THEN ${age("g.i")} + interval '1 day' END`,
    cancelled_at: `CASE WHEN g.i > ${Math.ceil(n * 0.02)} AND g.i % 20 = 0 THEN ${age("g.i")} END`,
    created_at: age("g.i"),
    updated_at: age("g.i")
  })
  await copy(
    "delivery_route_stops",
    tpl.stop,
    `(SELECT id, created_at FROM delivery_routes WHERE organization_id = '${org}' AND number LIKE 'S-%') AS g`,
    { ...owner, id: "gen_random_uuid()", route_id: "g.id", created_at: "g.created_at", updated_at: "g.created_at" }
  )
  // Obligations: one contract per thousand; due dates spread over the years around their creation.
  await copy("contracts", tpl.contract, `generate_series(1, ${Math.ceil(n / 1000)}) AS g(i)`, {
    ...owner,
    id: "gen_random_uuid()",
    name: `'Contract ' || g.i`,
    created_at: age("g.i * 1000"),
    updated_at: age("g.i * 1000")
  })
  await copy(
    "contract_obligations",
    tpl.obligation,
    `${series}, (SELECT array_agg(id) AS ids FROM contracts WHERE organization_id = '${org}') AS c`,
    {
      ...owner,
      id: "gen_random_uuid()",
      contract_id: "c.ids[1 + g.i % cardinality(c.ids)]",
      title: `'Obligation ' || g.i`,
      due_date: `(${age("g.i")} + (g.i % 90) * interval '1 day')::date`,
      recurrence_anchor_day: `extract(day FROM ${age("g.i")} + (g.i % 90) * interval '1 day')::smallint`,
      status: `CASE WHEN g.i <= ${Math.ceil(n * 0.05)} THEN 'pending' WHEN g.i % 25 = 0 THEN 'cancelled' ELSE 'completed' END`,
      completed_at: `CASE WHEN g.i > ${Math.ceil(n * 0.05)} AND g.i % 25 <> 0 THEN ${age("g.i")} END`,
      cancelled_at: `CASE WHEN g.i > ${Math.ceil(n * 0.05)} AND g.i % 25 = 0 THEN ${age("g.i")} END`,
      previous_obligation_id: "NULL",
      created_at: age("g.i"),
      updated_at: age("g.i")
    }
  )
  // Invoices: one customer per hundred; the newest 3 % open, the rest paid in full.
  await copy("contacts", tpl.contact, `generate_series(1, ${Math.ceil(n / 100)}) AS g(i)`, {
    ...owner,
    id: "gen_random_uuid()",
    name: `'Customer ' || g.i`,
    vat_number: "NULL",
    created_at: age("g.i * 100"),
    updated_at: age("g.i * 100")
  })
  await copy(
    "invoices",
    tpl.invoice,
    `${series}, (SELECT array_agg(id) AS ids FROM contacts WHERE organization_id = '${org}' AND name LIKE 'Customer %') AS c`,
    {
      ...owner,
      id: "gen_random_uuid()",
      contact_id: "c.ids[1 + g.i % cardinality(c.ids)]",
      series: `'S'`,
      number: `'S-' || lpad(g.i::text, 7, '0')`,
      status: `CASE WHEN g.i <= ${Math.ceil(n * 0.03)} THEN 'SENT' ELSE 'PAID' END`,
      paid_minor: `CASE WHEN g.i <= ${Math.ceil(n * 0.03)} THEN 0 ELSE t.total_minor END`,
      paid_at: `CASE WHEN g.i > ${Math.ceil(n * 0.03)} THEN ${age("g.i")} + interval '10 days' END`,
      issue_date: `${age("g.i")}::date`,
      due_date: `(${age("g.i")} + interval '30 days')::date`,
      issued_at: age("g.i"),
      created_at: age("g.i"),
      updated_at: age("g.i")
    }
  )
  await copy(
    "invoice_payments",
    tpl.payment,
    `(SELECT id, issue_date, created_at FROM invoices WHERE organization_id = '${org}' AND series = 'S' AND status = 'PAID') AS g`,
    {
      ...owner,
      id: "gen_random_uuid()",
      invoice_id: "g.id",
      payment_date: "g.issue_date + 10",
      created_at: "g.created_at + interval '10 days'"
    }
  )
  await copy("expenses", tpl.expense, series, {
    ...owner,
    id: "gen_random_uuid()",
    description: `'Expense ' || g.i`,
    expense_date: `${age("g.i")}::date`,
    created_at: age("g.i"),
    updated_at: age("g.i")
  })
  // Webhook deliveries of one subscription: the event, the delivery, one attempt each.
  const [sub] = await q(`SELECT id FROM webhook_subscriptions WHERE organization_id = $1 ORDER BY created_at LIMIT 1`, [org]) as any[]
  await q(`INSERT INTO outbox_events (id, event_id, organization_id, environment, type, data, created_at, processed_at)
    SELECT gen_random_uuid(), 'evt_seed_' || g.i, '${org}', 'live', 'delivery_route.dispatched', '{}'::jsonb, ${age("g.i")}, ${age("g.i")}
    FROM ${series}`)
  await q(`INSERT INTO webhook_deliveries (id, organization_id, environment, subscription_id, outbox_event_id, event_id, event_type,
      status, attempts, attempt_count, last_attempt_at, last_status_code, created_at, updated_at)
    SELECT gen_random_uuid(), e.organization_id, 'live', '${sub.id}', e.id, e.event_id, e.type,
      CASE WHEN right(e.event_id, 2) = '00' THEN 'dead' ELSE 'succeeded' END, 1, 1, e.created_at,
      CASE WHEN right(e.event_id, 2) = '00' THEN 500 ELSE 200 END, e.created_at, e.created_at
    FROM outbox_events e WHERE e.organization_id = '${org}' AND e.event_id LIKE 'evt_seed_%'`)
  await q(`INSERT INTO webhook_attempts (id, delivery_id, number, created_at, status_code, duration_ms)
    SELECT gen_random_uuid(), d.id, 1, d.created_at, d.last_status_code, 40
    FROM webhook_deliveries d WHERE d.organization_id = '${org}' AND d.event_id LIKE 'evt_seed_%'`)
  return { webhookId: sub.id as string }
}

const started = Date.now()
const organizations: Array<{ organizationId: string; token: string; rows: number; webhookId: string }> = []
const sizes = [big, ...Array.from({ length: others }, () => small)]
let templateIds: Awaited<ReturnType<typeof templates>> | undefined
const triggered = ["invoices", "invoice_payments", "expenses"]
for (const table of triggered) await q(`ALTER TABLE ${table} DISABLE TRIGGER USER`)
for (const [i, rows] of sizes.entries()) {
  const fixture = await run(makeFixture(i === 0 ? "Seed: large organization" : `Seed: organization ${i}`))
  const token = fixture.tokens.api
  if (templateIds === undefined) templateIds = await templates(token)
  else {
    await api(token, "POST", "/v1/webhooks", { url: "https://hooks.example.com/seed", event_types: ["delivery_route.dispatched"] })
  }
  const t0 = Date.now()
  const { webhookId } = await fill(templateIds, fixture.organizationId, rows)
  organizations.push({ organizationId: fixture.organizationId, token, rows, webhookId })
  process.stderr.write(`organization ${i + 1}/${sizes.length}: ${rows} rows per table in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`)
}
for (const table of triggered) await q(`ALTER TABLE ${table} ENABLE TRIGGER USER`)
// Statistics for the planner, and the visibility map that lets deep offset pages read the index alone.
await q("VACUUM ANALYZE")
const counts = await q(`SELECT relname AS table, n_live_tup::bigint AS rows FROM pg_stat_user_tables
  WHERE n_live_tup > 0 ORDER BY n_live_tup DESC`) as ReadonlyArray<{ table: string; rows: string }>
const total = counts.reduce((sum, r) => sum + Number(r.rows), 0)
const tables = counts.slice(0, 12).map((r) => ({ table: r.table, rows: Number(r.rows) }))
writeFileSync(new URL("./state.json", import.meta.url), JSON.stringify({ organizations }, null, 2))
console.log(JSON.stringify({ seconds: Math.round((Date.now() - started) / 1000), totalRows: total, tables }, null, 2))
await close()
process.exit(0)
