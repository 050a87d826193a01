import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Contracts, Obligations, Tenancy } from "@opsplatform/core"
import { assertBuilt, freePort, runCli, runCommand, startServe } from "./support/cli.ts"
import { startPostgresCore } from "./support/core.ts"
import { postgresUrl } from "./support/databases.ts"

const json = (text: string) => JSON.parse(text.trim().split("\n").filter((l) => l.startsWith("{") || l.startsWith("[")).pop()!)

beforeAll(() => assertBuilt())

describe("opsplatform admin set-org and jobs run obligations on the embedded database", () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "opsplatform-obligations-"))
  // The serve below must not run the monitor after start, so the CLI pass finds the notices due.
  const env = { OPSPLATFORM_DATA_DIR: dataDir, DATABASE_URL: undefined, OPSPLATFORM_OBLIGATIONS_INTERVAL_SEC: "86400" }
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))

  it("sets the organization's time zone and escalation delay, validated", async () => {
    const org = json((await runCommand(["admin", "create-org", "--name", "Monitor Co"], env)).stdout)
    const set = await runCli(["admin", "set-org", "--org", org.id, "--time-zone", "Europe/Bucharest", "--escalation-delay-days", "0"], env)
    expect(set.code, set.stderr).toBe(0)
    expect(json(set.stdout)).toMatchObject({ id: org.id, name: "Monitor Co", time_zone: "Europe/Bucharest", escalation_delay_days: 0 })
    const badZone = await runCommand(["admin", "set-org", "--org", org.id, "--time-zone", "Europe/Atlantis"], env)
    expect(badZone.code).toBe(1)
    expect(badZone.stdout.trim()).toBe("")
    expect(json(badZone.stderr).error.details).toEqual([
      { field: "time_zone", issue: "must be an IANA time zone such as Europe/Bucharest" }
    ])
    const badDelay = await runCommand(["admin", "set-org", "--org", org.id, "--escalation-delay-days", "366"], env)
    expect(badDelay.code).toBe(1)
    expect(json(badDelay.stderr).error.details[0].field).toBe("escalation_delay_days")
    const unknown = await runCommand(["admin", "set-org", "--org", "00000000-0000-4000-8000-000000000000", "--name", "X"], env)
    expect(json(unknown.stderr).error.code).toBe("not_found")

    const key = json((await runCommand(["admin", "create-key", "--org", org.id, "--env", "live", "--scopes", "contracts:read contracts:write"], env)).stdout)
    const port = await freePort()
    const serving = await startServe(port, env)
    const auth = { authorization: `Bearer ${key.token}`, "content-type": "application/json" }
    const post = async (url: string, body: unknown) =>
      (await (await fetch(`${serving.url}${url}`, { method: "POST", headers: auth, body: JSON.stringify(body) })).json()).data
    const contract = await post("/v1/contracts", { name: "Lease" })
    const late = await post("/v1/contract-obligations", { contract_id: contract.id, title: "Rent", type: "payment", due_date: "2020-01-01" })
    await post("/v1/contract-obligations", { contract_id: contract.id, title: "Renewal", type: "renewal_notice", due_date: "2099-01-01" })
    serving.child.kill("SIGTERM")
    expect(await serving.exited).toBe(0)

    const first = await runCli(["jobs", "run", "obligations"], env)
    expect(first.code, first.stderr).toBe(0)
    const summary = json(first.stdout)
    expect(summary).toMatchObject({ reminders: 0, overdue: 1, escalations: 1 })
    expect(summary.notices.map((n: any) => [n.kind, n.obligation_id, n.organization_id, n.environment, n.due_date])).toEqual([
      ["overdue", late.id, org.id, "live", "2020-01-01"],
      ["escalation", late.id, org.id, "live", "2020-01-01"]
    ])
    // The log line names ids only.
    expect(first.stderr).toContain(`"obligation_id":"${late.id}"`)
    expect(first.stderr).not.toContain("Rent")
    const second = json((await runCommand(["jobs", "run", "obligations"], env)).stdout)
    expect([second.overdue, second.escalations, second.notices]).toEqual([0, 0, []])
  }, 240_000)
})

// Two processes need a PostgreSQL server: the embedded database serves one process.
describe.runIf(postgresUrl() !== undefined)("two `jobs run obligations` processes on one PostgreSQL", () => {
  const env = { DATABASE_URL: postgresUrl() }

  it("send each notice exactly once between them", async () => {
    const { close, run } = await startPostgresCore()
    try {
      const { ids, org } = await run(Effect.gen(function*() {
        const org = yield* (yield* Tenancy.Tenancy).createOrganization({ name: "Two processes" })
        yield* (yield* Tenancy.Tenancy).updateSettings(org.id, { escalation_delay_days: 0 })
        const live = { organizationId: org.id, environment: "live" as const }
        const contract = yield* (yield* Contracts.Contracts).create(live, { name: "Bulk" })
        const obligations = yield* Obligations.Obligations
        const ids: Array<string> = []
        for (let i = 0; i < 120; i++) {
          ids.push((yield* obligations.create(live, {
            contract_id: contract.id,
            title: `Late ${i}`,
            type: "payment",
            due_date: `2020-01-${String(1 + (i % 28)).padStart(2, "0")}`
          })).id)
        }
        return { ids, org }
      }))
      const [a, b] = await Promise.all([
        runCli(["jobs", "run", "obligations", "--org", org.id], env),
        runCli(["jobs", "run", "obligations", "--org", org.id], env)
      ])
      expect(a.code, a.stderr).toBe(0)
      expect(b.code, b.stderr).toBe(0)
      const sent = [...json(a.stdout).notices, ...json(b.stdout).notices]
      expect(sent.length).toBe(ids.length * 2)
      const rows = await run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`SELECT subject_id, kind, count(*)::int AS n FROM notifications WHERE organization_id = ${org.id}
          GROUP BY subject_id, kind`))
      expect(rows.length).toBe(ids.length * 2)
      expect(rows.every((r: any) => r.n === 1)).toBe(true)
      expect(new Set(rows.map((r: any) => r.subject_id))).toEqual(new Set(ids))
    } finally {
      await close()
    }
  }, 240_000)
})
