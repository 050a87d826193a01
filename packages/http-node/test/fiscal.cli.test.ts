import { Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { PGlite } from "@electric-sql/pglite"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { Contacts, Events, FiscalMonitor, Identifiers, Invoices, RateLimiter, Tenancy, Transactor } from "@opsplatform/core"
import { type FakeAnaf, startFakeAnaf } from "@opsplatform/testing/fakeAnaf"
import { type CoreConfig, layerTest, type ServerConfig } from "../src/config/Configuration.ts"
import { FiscalMonitorJob, FiscalRegistryLive } from "../src/server/jobs/fiscal.ts"
import { assertBuilt, runCli } from "./support/cli.ts"
import { openCore } from "./support/core.ts"
import { postgresUrl } from "./support/databases.ts"

const json = (text: string) => JSON.parse(text.trim().split("\n").filter((l) => l.startsWith("{")).pop()!)

let nextBody = 50_000_000 + Math.floor(Math.random() * 5_000_000) * 10
const freshCuis = (n: number) =>
  Array.from({ length: n }, () => {
    const body = String(nextBody++)
    return body + String(Identifiers.cuiControlDigit(body))
  })

/** An organization with one open RON invoice per CUI, each to its own customer. */
const seed = (cuis: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const org = yield* (yield* Tenancy.Tenancy).createOrganization({ name: "Fiscal processes" })
    const live = { organizationId: org.id, environment: "live" as const }
    const contacts = yield* Contacts.Contacts
    const invoices = yield* Invoices.Invoices
    const ids: Array<string> = []
    yield* (yield* Transactor.Transactor).withTransaction(Effect.forEach(cuis, (cui) =>
      Effect.gen(function*() {
        const contact = yield* contacts.create(live, { name: `Client ${cui}`, kind: "customer", vat_number: cui })
        const draft = yield* invoices.create(live, {
          contact_id: contact.id,
          currency: "RON",
          lines: [{ description: "Services", quantity: "1", unit_price: "100", vat_rate: 0 }]
        })
        yield* invoices.issue(live, draft.id, { series: "FCT" })
        ids.push(contact.id)
      })))
    return { org, ids }
  }).pipe(Effect.orDie)

let fake: FakeAnaf
beforeAll(async () => {
  assertBuilt()
  fake = await startFakeAnaf()
})
afterAll(() => fake.close())

describe("opsplatform jobs run fiscal-status on the embedded database", () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "opsplatform-fiscal-"))
  const env = () => ({ OPSPLATFORM_DATA_DIR: dataDir, DATABASE_URL: undefined, OPSPLATFORM_ANAF_URL: fake.url })
  // The data directory starts from the run's migrated template instead of its own initdb.
  beforeAll(async () => {
    const template = new Blob([fs.readFileSync(inject("pgliteTemplate"))])
    await (await PGlite.create(path.join(dataDir, "pglite"), { loadDataDir: template })).close()
  })
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))

  it("records the baseline and sends nothing", async () => {
    const [cui] = freshCuis(1)
    fake.set(cui!)
    const core = await openCore({ _tag: "Embedded", dataDir }, { OPSPLATFORM_ANAF_URL: fake.url })
    const { org } = await core.run(seed([cui!])).finally(() => core.close())
    const first = await runCli(["jobs", "run", "fiscal-status", "--org", org.id], env())
    expect(first.code, first.stderr).toBe(0)
    expect(json(first.stdout)).toMatchObject({ checked: 1, baselines: 1, not_found: 0, unavailable: 0, events: [] })
    expect(fake.requests.filter((r) => r.body.some((e) => String(e.cui) === cui)).length).toBe(1)
  }, 120_000)
})

describe("the fiscal settings", () => {
  const build = (layer: Layer.Layer<never, never, CoreConfig | ServerConfig>, env: Record<string, string>) =>
    Effect.runPromiseExit(Effect.scoped(Layer.build(layer.pipe(
      Layer.provide(layerTest(env))
    ))))
  const registry = FiscalRegistryLive.pipe(Layer.provide(RateLimiter.RateLimiter.layerMemory))
  const job = FiscalMonitorJob.pipe(Layer.provide(Layer.succeed(FiscalMonitor.FiscalMonitor, {
    run: () => Effect.never,
    runAt: () => Effect.never
  })))

  it("refuse a malformed value at start, naming the variable", async () => {
    for (const [name, value] of [
      ["OPSPLATFORM_ANAF_URL", "ftp://anaf.example"],
      ["OPSPLATFORM_ANAF_TIMEOUT_MS", "0"],
      ["OPSPLATFORM_ANAF_RETRIES", "11"],
      ["OPSPLATFORM_ANAF_RETRY_BASE_MS", "soon"],
      ["OPSPLATFORM_ANAF_REQUESTS_PER_SECOND", "0"],
      ["OPSPLATFORM_ANAF_REQUESTS_PER_SECOND", "101"]
    ] as const) {
      const exit = await build(registry, { [name]: value })
      expect(Exit.isFailure(exit), name).toBe(true)
      expect(String(Exit.isFailure(exit) ? exit.cause : ""), name).toContain(name)
    }
    expect(Exit.isSuccess(await build(registry, {}))).toBe(true)
    expect(Exit.isSuccess(await build(registry, { OPSPLATFORM_ANAF_REQUESTS_PER_SECOND: "100" }))).toBe(true)
    for (const [name, value] of [
      ["OPSPLATFORM_FISCAL_CHECK_HOUR", "24"],
      ["OPSPLATFORM_FISCAL_CHECK_HOUR", "6.5"],
      ["OPSPLATFORM_FISCAL_INTERVAL_SEC", "0"],
      ["OPSPLATFORM_FISCAL_INTERVAL_SEC", "86401"]
    ] as const) {
      const exit = await build(job, { [name]: value })
      expect(Exit.isFailure(exit), `${name}=${value}`).toBe(true)
      expect(String(Exit.isFailure(exit) ? exit.cause : ""), name).toContain(name)
    }
    expect(Exit.isSuccess(await build(job, { OPSPLATFORM_FISCAL_CHECK_HOUR: "0", OPSPLATFORM_FISCAL_INTERVAL_SEC: "86400" }))).toBe(true)
  })
})

// Two processes need a PostgreSQL server: the embedded database serves one process.
describe.runIf(postgresUrl() !== undefined)("two `jobs run fiscal-status` processes on one PostgreSQL", () => {
  it("send each change exactly once between them", async () => {
    const cuis = freshCuis(150)
    for (const cui of cuis) fake.set(cui)
    const core = await openCore({ _tag: "Postgres", url: postgresUrl()!, maxConnections: 2 }, { OPSPLATFORM_ANAF_URL: fake.url })
    try {
      const { ids, org } = await core.run(seed(cuis))
      // Yesterday's check recorded the baseline; today the registry declares every one of them inactive.
      const baseline = await core.run(Effect.flatMap(FiscalMonitor.FiscalMonitor, (m) =>
        m.runAt(Date.now() - 86_400_000, { organizationId: org.id })))
      expect(baseline.baselines).toBe(150)
      for (const cui of cuis) fake.set(cui, { statusInactivi: true, dataInactivare: "2026-05-10" })

      const env = { DATABASE_URL: postgresUrl(), OPSPLATFORM_ANAF_URL: fake.url }
      const [a, b] = await Promise.all([
        runCli(["jobs", "run", "fiscal-status", "--org", org.id], env),
        runCli(["jobs", "run", "fiscal-status", "--org", org.id], env)
      ])
      expect(a.code, a.stderr).toBe(0)
      expect(b.code, b.stderr).toBe(0)
      const sent = [...json(a.stdout).events, ...json(b.stdout).events].map((e: { event_id: string }) => e.event_id)
      expect(sent.sort()).toEqual(ids.map((id) => Events.fiscalStatusEventId(id, "became_inactive", "2026-05-10")).sort())
      const rows = await core.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ readonly event_id: string; readonly n: number }>`SELECT event_id, count(*)::int AS n FROM outbox_events
          WHERE organization_id = ${org.id} AND type = 'contact.fiscal_status_changed' GROUP BY event_id`))
      expect(rows.length).toBe(150)
      expect(rows.every((r) => r.n === 1)).toBe(true)
    } finally {
      await core.close()
    }
  }, 240_000)
})
