import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { Devices, Tenancy } from "@opsplatform/core"
import { assertBuilt, freePort, runCli, startServe } from "./support/cli.ts"
import { startPostgresCore } from "./support/core.ts"
import { postgresUrl } from "./support/databases.ts"

// Two server processes need a PostgreSQL server: the embedded database serves one process.
describe.runIf(postgresUrl() !== undefined)("two `opsplatform serve` processes on one PostgreSQL", () => {
  it("admit at most 5 of 200 concurrent unlock attempts for one device, and audit all 200", async () => {
    assertBuilt()
    const { close, run } = await startPostgresCore()
    const servers: Array<Awaited<ReturnType<typeof startServe>>> = []
    try {
      const { deviceId, organizationId, token } = await run(Effect.gen(function*() {
        const org = yield* (yield* Tenancy.Tenancy).createOrganization({ name: "Two servers" })
        const live = { organizationId: org.id, environment: "live" as const }
        const devices = yield* Devices.Devices
        const made = yield* devices.create(live, { name: "Lobby" })
        yield* devices.setPin(live, made.device.id, "271828")
        return { deviceId: made.device.id, organizationId: org.id, token: made.token }
      }))
      const env = { DATABASE_URL: postgresUrl() }
      servers.push(...await Promise.all([startServe(await freePort(), env), startServe(await freePort(), env)]))
      const attempts = await Promise.all(Array.from({ length: 200 }, (_, i) =>
        fetch(`${servers[i % 2]!.url}/v1/display/unlock`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ pin: "271828" })
        }).then(async (r) => ({ status: r.status, body: await r.json() as any, server: i % 2 }))))
      const admitted = attempts.filter((a) => a.status === 200)
      expect(admitted.length).toBe(5)
      expect(admitted.every((a) => a.body.data.ok === true)).toBe(true)
      expect(attempts.filter((a) => a.status === 429).length).toBe(195)
      // Both processes answered.
      expect(new Set(attempts.map((a) => a.server)).size).toBe(2)
      const audited = await run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ readonly outcome: string; readonly n: number }>`SELECT outcome, count(*)::int AS n FROM audit_events
          WHERE organization_id = ${organizationId} AND device_id = ${deviceId} AND action = 'display.unlock'
          GROUP BY outcome ORDER BY outcome`))
      expect(audited.map((r) => [r.outcome, r.n])).toEqual([["denied", 195], ["success", 5]])
    } finally {
      for (const s of servers) s.child.kill("SIGTERM")
      await Promise.all(servers.map((s) => s.exited))
      await close()
    }
  }, 240_000)

  it("two `jobs run pulse` processes fold every delta once: the rollups equal the rows they sum", async () => {
    assertBuilt()
    const { close, run } = await startPostgresCore()
    try {
      const sql = (f: (sql: SqlClient.SqlClient) => Effect.Effect<any, any, any>) => run(Effect.flatMap(SqlClient.SqlClient, f))
      const org = await run(Effect.flatMap(Tenancy.Tenancy, (t) => t.createOrganization({ name: "Two pulse jobs" })))
      // 3 000 invoices in RON and EUR, two thirds paid in part: each row's trigger appends its deltas.
      await sql((sql) => Effect.gen(function*() {
        const contact = crypto.randomUUID()
        yield* sql`INSERT INTO contacts (id, organization_id, environment, name, kind, country, created_at, updated_at)
          VALUES (${contact}, ${org.id}, 'live', 'Client', 'customer', 'RO', now(), now())`
        yield* sql`INSERT INTO invoices (id, organization_id, environment, contact_id, status, currency, issue_date, due_date,
            exchange_rate_ron, lines, subtotal_minor, vat_minor, total_minor, credited_minor, paid_minor, created_at, updated_at)
          SELECT gen_random_uuid(), ${org.id}, 'live', ${contact}, 'SENT', CASE WHEN i % 4 = 0 THEN 'EUR' ELSE 'RON' END,
            DATE '2026-01-01' + i % 90, DATE '2026-01-15' + i % 90, CASE WHEN i % 4 = 0 THEN '4.9' END, '[]'::jsonb,
            1000 + i, 0, 1000 + i, 0, 0, now(), now()
          FROM generate_series(1, 3000) AS i`
        yield* sql`INSERT INTO invoice_payments (id, organization_id, environment, invoice_id, amount_minor, payment_date,
            method, reference, source, created_at)
          SELECT gen_random_uuid(), organization_id, environment, id, 500, issue_date + 3, 'CASH', '', 'manual', now()
          FROM invoices WHERE organization_id = ${org.id} AND total_minor % 3 <> 0`
        yield* sql`UPDATE invoices SET paid_minor = 500, status = 'PARTIALLY_PAID'
          WHERE organization_id = ${org.id} AND total_minor % 3 <> 0`
      }))
      const pending = async () =>
        Number((await sql((sql) => sql`SELECT count(*)::int AS n FROM pulse_deltas WHERE organization_id = ${org.id}`))[0].n)
      expect(await pending()).toBeGreaterThan(3000)
      const env = { DATABASE_URL: postgresUrl() }
      const [a, b] = await Promise.all([runCli(["jobs", "run", "pulse"], env), runCli(["jobs", "run", "pulse"], env)])
      expect(a.code, a.stderr).toBe(0)
      expect(b.code, b.stderr).toBe(0)
      expect(JSON.parse(a.stdout).folded + JSON.parse(b.stdout).folded).toBeGreaterThan(3000)
      expect(await pending()).toBe(0)
      // Every rollup equals the rows it sums, measure by measure.
      const folded = await sql((sql) => sql`SELECT measure, currency, SUM(minor)::text AS minor, SUM(count)::int AS n
        FROM pulse_days WHERE organization_id = ${org.id} GROUP BY 1, 2 HAVING SUM(count) <> 0 ORDER BY 1, 2`)
      const rows = await sql((sql) => sql`
        SELECT 'collected' AS measure, i.currency, SUM(p.amount_minor)::text AS minor, count(*)::int AS n
          FROM invoice_payments p JOIN invoices i ON i.id = p.invoice_id WHERE p.organization_id = ${org.id} GROUP BY 1, 2
        UNION ALL SELECT 'invoiced', currency, SUM(total_minor)::text, count(*)::int FROM invoices
          WHERE organization_id = ${org.id} GROUP BY 1, 2
        UNION ALL SELECT m, currency, SUM(total_minor - paid_minor)::text, count(*)::int FROM invoices,
          (VALUES ('open_by_due_date'), ('open_by_issue_date')) AS v(m) WHERE organization_id = ${org.id} GROUP BY 1, 2
        ORDER BY 1, 2`)
      expect(folded).toEqual(rows)
    } finally {
      await close()
    }
  }, 240_000)
})
