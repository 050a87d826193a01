/**
 * The fiscal check's own work, on one database in one run, with a registry in memory so the
 * tax authority's pacing (one request of 100 CUIs a second) is left out:
 *
 * 1. The first pass over N customers with open invoices: claim in batches of 100, one
 *    registry call per batch, a baseline snapshot and the contact's status per customer.
 * 2. The next day's pass, every customer changed: the same, plus one event per customer with
 *    its open balance, published through the outbox (and its webhook fan-out).
 *    Baseline: the floor for the same writes in one transaction, without claiming or comparing:
 *    one UPDATE of the contacts, one INSERT … SELECT of the snapshots and one of the events.
 *
 *   DATABASE_URL=postgres://... npx tsx --conditions source benchmarks/fiscal/bench.ts
 *   (without DATABASE_URL it uses an in-memory PGlite)
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { FiscalMonitor, FiscalRegistry, Identifiers, type FiscalModel, Tenancy } from "@opsplatform/core"
import { openBenchCore } from "../support/core.ts"

const customers = Number(process.env.BENCH_CUSTOMERS ?? 2_000)
// The registry below answers; nothing may reach the real tax authority.
process.env.OPSPLATFORM_ANAF_URL = "http://127.0.0.1:9"
const { close, database, run, scope } = await openBenchCore()

const off = { status: false, effective_date: null }
const inactive = { status: false, effective_date: null as string | null }
const statuses = new Map<string, FiscalModel.FiscalStatus>()
const registry: FiscalRegistry.FiscalRegistryShape = {
  lookup: (cuis) =>
    Effect.sync(() => ({
      found: new Map(cuis.map((cui) => [cui, statuses.get(cui)!])),
      notFound: new Set<string>()
    }))
}
const monitor = Context.get(
  await run(Layer.buildWithScope(
    // Fresh: the server's own monitor (asking ANAF) is already built in this context and would be reused.
    Layer.fresh(FiscalMonitor.FiscalMonitor.layer).pipe(Layer.provide(Layer.succeed(FiscalRegistry.FiscalRegistry, registry))),
    scope
  )),
  FiscalMonitor.FiscalMonitor
)

/** An organization of `count` Romanian customers, each with one open RON invoice, inserted in bulk. */
const seed = (count: number, name: string) =>
  run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const org = yield* (yield* Tenancy.Tenancy).createOrganization({ name })
    const base = 60_000_000 + Math.floor(Math.random() * 3_000_000) * 10
    const cuis = Array.from({ length: count }, (_, i) => {
      const body = String(base + i)
      return body + String(Identifiers.cuiControlDigit(body))
    })
    yield* sql`INSERT INTO contacts (id, organization_id, environment, name, kind, country, vat_number, created_at, updated_at)
      SELECT gen_random_uuid(), ${org.id}, 'live', 'Client ' || cui, 'customer', 'RO', cui, now(), now()
      FROM unnest(${cuis}::text[]) AS cui`
    yield* sql`INSERT INTO invoices (id, organization_id, environment, contact_id, status, series, number, currency,
        issue_date, due_date, lines, subtotal_minor, vat_minor, total_minor, issued_at, created_at, updated_at)
      SELECT gen_random_uuid(), organization_id, environment, id, 'SENT', 'FCT', 'FCT-' || lpad(row_number() OVER ()::text, 6, '0'),
        'RON', current_date, current_date, '[]'::jsonb, 125000, 0, 125000, now(), now(), now()
      FROM contacts WHERE organization_id = ${org.id}`
    for (const cui of cuis) {
      statuses.set(cui, {
        cui,
        inactive,
        struck_off: off,
        insolvency: off,
        vat_registered: { status: true, effective_date: "2015-03-01" },
        cash_vat: off
      })
    }
    return { org, cuis }
  }))

const timed = async <A>(body: () => Promise<A>) => {
  const start = performance.now()
  const result = await body()
  return { ms: Number((performance.now() - start).toFixed(1)), result }
}

const now = Date.now()
const { cuis, org } = await seed(customers, "Fiscal bench")
const first = await timed(() => run(monitor.runAt(now, { organizationId: org.id })))
for (const cui of cuis) statuses.set(cui, { ...statuses.get(cui)!, inactive: { status: true, effective_date: "2026-05-10" } })
const second = await timed(() => run(monitor.runAt(now + 86_400_000, { organizationId: org.id })))

const floorOrg = await seed(customers, "Fiscal floor")
const floor = await timed(() =>
  run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`UPDATE contacts SET fiscal_status = jsonb_build_object('cui', vat_number), fiscal_checked_at = now(),
          fiscal_check_date = current_date
        WHERE organization_id = ${floorOrg.org.id}`
      yield* sql`INSERT INTO contact_fiscal_snapshots (id, organization_id, environment, contact_id, checked_on, status,
          baseline, changes, event_id, created_at)
        SELECT gen_random_uuid(), organization_id, environment, id, current_date, fiscal_status, false,
          '[{"kind":"became_inactive","effective_date":"2026-05-10"}]'::jsonb, 'evt_fsc_' || id, now()
        FROM contacts WHERE organization_id = ${floorOrg.org.id}`
      yield* sql`INSERT INTO outbox_events (id, event_id, organization_id, environment, type, data, payload, created_at, processed_at)
        SELECT gen_random_uuid(), 'evt_fsc_' || c.id, c.organization_id, c.environment, 'contact.fiscal_status_changed',
          jsonb_build_object('changes', '[]'::jsonb, 'open_invoices', jsonb_build_object('count', 1, 'balance_ron', '1250.00')),
          '{}', now(), now()
        FROM contacts c WHERE c.organization_id = ${floorOrg.org.id}`
    }))
  })))

const requests = Math.ceil(customers / 100)
console.log(JSON.stringify({
  database: database._tag,
  customers,
  first_pass: { ms: first.ms, baselines: first.result.baselines },
  change_pass: { ms: second.ms, events: second.result.events.length },
  floor: { ms: floor.ms },
  ratio_to_floor: Number((second.ms / floor.ms).toFixed(1)),
  per_100_customers_ms: Number((second.ms / requests).toFixed(1)),
  registry_pacing_per_100_ms: 1100
}, null, 2))
// Its customers would be due for a real check by any server on this database: remove them.
await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM organizations WHERE id IN (${org.id}, ${floorOrg.org.id})`))
await close()
