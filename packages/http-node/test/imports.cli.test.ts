import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import iconv from "iconv-lite"
import { execFile, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Imports, Pagination, Tenancy } from "@opsplatform/core"
import { writeContactsCsv } from "@opsplatform/testing/importFiles"
import type { DatabaseChoice } from "../src/server/database.ts"
import { assertBuilt, bin, runCli, runCommand } from "./support/cli.ts"
import { testVariables } from "./support/config.ts"
import { openCore } from "./support/core.ts"
import { postgresUrl } from "./support/databases.ts"

const json = (text: string) => JSON.parse(text.trim().split("\n").filter((l) => l.startsWith("{") || l.startsWith("[")).pop()!)

beforeAll(() => assertBuilt())

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "opsplatform-imports-cli-"))
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

/** A SmartBill partner list: Windows-1250, semicolons, cedilla ş ţ, a decimal comma. */
const partnerFile = (name: string) => {
  const file = path.join(tmp, name)
  fs.writeFileSync(file, iconv.encode([
    "Denumire;CIF/CNP;Reg. com.;Adresa;Localitate;Judet;Tara;Email;Telefon;Sold",
    "Fabrica de Pâine Ştefan SRL;RO18547290;J40/1234/2020;Str. Ţepeş Vodă 3;Bucureşti;Bucureşti;RO;office@paine.ro;0722000111;1.234,56",
    "Fără CUI bun;12345;;;;;;;;0"
  ].join("\r\n") + "\r\n", "windows-1250"))
  return file
}

/** The contacts of an organization, by a query of their own. */
const contactsOf = (orgId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ name: string; address: string | null }>`SELECT name, address FROM contacts WHERE organization_id = ${orgId} ORDER BY name`)

const countContacts = (orgId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`SELECT count(*)::int AS n FROM contacts WHERE organization_id = ${orgId}`).pipe(Effect.map((r) => r[0]!.n))

describe("opsplatform import on the embedded database", () => {
  const dataDir = fs.mkdtempSync(path.join(tmp, "data-"))
  const env = { OPSPLATFORM_DATA_DIR: dataDir, DATABASE_URL: undefined }
  let org: string

  beforeAll(async () => {
    const created = await runCommand(["admin", "create-org", "--name", "Import Co"], env)
    expect(created.code, created.stderr).toBe(0)
    org = json(created.stdout).id
  }, 120_000)

  it("previews a Windows-1250 SmartBill partner list, then applies it, printing the job as JSON", async () => {
    const file = partnerFile("parteneri.csv")
    const preview = await runCli(["import", file, "--org", org, "--entity", "contacts", "--preset", "smartbill"], env)
    expect(preview.code, preview.stderr).toBe(0)
    const job = JSON.parse(preview.stdout)
    expect(job).toMatchObject({
      status: "ready",
      source: "cli",
      filename: "parteneri.csv",
      preset: "smartbill",
      delimiter: ";",
      total_rows: 2,
      error_count: 1,
      preview: { news: 1, updates: 0, skips: 0, errors: 1 }
    })
    expect(job.preview.samples.news[0].fields.name).toBe("Fabrica de Pâine Ștefan SRL")
    // Progress goes to stderr as log lines; stdout is the job alone.
    expect(preview.stderr).toContain(`"message":"import progress"`)

    const applied = await runCommand(["import", file, "--org", org, "--entity", "contacts", "--preset", "smartbill", "--apply"], env)
    expect(applied.code, applied.stderr).toBe(0)
    expect(JSON.parse(applied.stdout)).toMatchObject({ status: "completed", imported_count: 1, error_count: 1 })
    // The same file again: the contact exists unchanged, so the row is skipped.
    const again = await runCommand(["import", file, "--org", org, "--entity", "contacts", "--preset", "smartbill", "--apply"], env)
    expect(JSON.parse(again.stdout)).toMatchObject({ status: "completed", imported_count: 0, skipped_count: 1 })
  }, 120_000)

  it("draws parse and apply progress bars on a terminal", async () => {
    const file = path.join(tmp, "bar.csv")
    writeContactsCsv(file, 2_500)
    // `script` gives the command a pseudo-terminal, as an operator's shell does.
    const { stdout } = await promisify(execFile)("script", [
      "-qec",
      `${process.execPath} ${bin} import ${file} --org ${org} --entity contacts --apply`,
      "/dev/null"
    ], { env: { ...process.env, OPSPLATFORM_DATA_DIR: dataDir, DATABASE_URL: "", COLUMNS: "100" } })
    expect(stdout).toMatch(/parse \[#{24}\] \d+\/\d+ 2500 rows/)
    expect(stdout).toMatch(/apply \[#{24}\] 2500\/2500 2500 rows/)
    expect(stdout).toContain(`"status":"completed","encoding":"UTF-8"`)
  }, 120_000)

  it("answers bad input clearly: an empty file fails the job (exit 1), a bad mapping or organization is refused", async () => {
    const empty = path.join(tmp, "empty.csv")
    fs.writeFileSync(empty, "")
    const res = await runCommand(["import", empty, "--org", org, "--entity", "contacts", "--apply"], env)
    expect(res.code).toBe(1)
    expect(JSON.parse(res.stdout)).toMatchObject({ status: "failed", failure: { code: "empty_file" }, imported_count: 0 })

    const mapping = await runCommand(["import", partnerFile("m.csv"), "--org", org, "--entity", "contacts", "--mapping", "[1]"], env)
    expect(mapping.code).toBe(1)
    expect(mapping.stdout.trim()).toBe("")
    expect(json(mapping.stderr).error.details).toEqual([{ field: "mapping", issue: expect.stringContaining("JSON object") }])

    const unknown = await runCommand(["import", empty, "--org", "00000000-0000-4000-8000-000000000000", "--entity", "contacts"], env)
    expect(json(unknown.stderr).error.code).toBe("not_found")
  }, 120_000)
})

/**
 * Runs `opsplatform import FILE --apply` on a 50 000-row file, kills it with
 * SIGKILL once its apply has written a few batches, and checks that the
 * target table holds none of the rows and that the job applies again to
 * completion. `open` gives core on the same database in this process (after
 * the child is gone, for the embedded one).
 */
const killMidApply = async (childEnv: Record<string, string | undefined>, choice: DatabaseChoice, org: string) => {
  const rows = 50_000
  const file = path.join(tmp, `kill-${Date.now()}.csv`)
  writeContactsCsv(file, rows)
  const child = spawn(process.execPath, [bin, "import", file, "--org", org, "--entity", "contacts", "--apply"], {
    env: { ...process.env, ...testVariables(), ...childEnv },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stderr = ""
  let stdout = ""
  child.stdout.on("data", (d) => (stdout += d))
  const exited = new Promise<NodeJS.Signals | null>((done) => child.on("close", (_code, signal) => done(signal)))
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the apply did not start:\n${stderr}`)), 180_000)
    child.stderr.on("data", (d) => {
      stderr += d
      // Some 5000 rows written inside the apply's transaction (it writes a staged batch at a time): well into it.
      if ([...stderr.matchAll(/"phase":"apply","rows":(\d+)/g)].some((m) => Number(m[1]) >= 5000)) {
        clearTimeout(timer)
        child.kill("SIGKILL")
        resolve()
      }
    })
    child.on("close", () => reject(new Error(`the import ended before it was killed:\n${stdout}\n${stderr}`)))
  })
  expect(await exited).toBe("SIGKILL")
  expect(stdout).toBe("")

  const core = await openCore(choice)
  try {
    const tenant = { organizationId: org, environment: "live" as const }
    expect(await core.run(countContacts(org))).toBe(0)
    const listed = await core.run(Effect.gen(function*() {
      return yield* (yield* Imports.Imports).list(tenant, yield* Pagination.pageRequest({ perPage: 1 }))
    }))
    const job = listed.items[0]!
    // The killed apply left the job running with nothing written; it applies again, whole.
    expect(job).toMatchObject({ status: "running", total_rows: rows, preview: { news: rows, errors: 0 }, imported_count: 0 })
    const done = await core.run(Effect.flatMap(Imports.Imports, (i) => i.apply(tenant, job.id)))
    expect(done).toMatchObject({ status: "completed", imported_count: rows, processed_rows: rows })
    expect(await core.run(countContacts(org))).toBe(rows)
    const sample = await core.run(contactsOf(org).pipe(Effect.map((all) => all.find((c) => c.name === "Firma Ștefan 4242 SRL"))))
    expect(sample?.address).toContain("Str. Țepeș Vodă")
  } finally {
    await core.close()
  }
}

describe("a killed `opsplatform import --apply` leaves nothing written (embedded database)", () => {
  const dataDir = fs.mkdtempSync(path.join(tmp, "kill-"))
  const env = { OPSPLATFORM_DATA_DIR: dataDir, DATABASE_URL: undefined }

  it("SIGKILL mid-apply of 50 000 contacts: no contact stored; the job applies again to completion", async () => {
    const org = json((await runCommand(["admin", "create-org", "--name", "Killed Co"], env)).stdout).id
    await killMidApply(env, { _tag: "Embedded", dataDir }, org)
  }, 600_000)
})

// Killing a process that holds the database needs one the test can reach afterwards: PostgreSQL from
// DATABASE_URL (CI sets it; the suite's global setup fails the run when it is set but unreachable).
describe.runIf(postgresUrl() !== undefined)("a killed `opsplatform import --apply` leaves nothing written (PostgreSQL)", () => {
  it("SIGKILL mid-apply of 50 000 contacts: no contact stored; the job applies again to completion", async () => {
    const choice: DatabaseChoice = { _tag: "Postgres", url: postgresUrl()!, maxConnections: 2 }
    const core = await openCore(choice)
    const org = await core.run(Effect.flatMap(Tenancy.Tenancy, (t) => t.createOrganization({ name: "Killed PG Co" })))
    await core.close()
    await killMidApply({ DATABASE_URL: postgresUrl() }, choice, org.id)
  }, 600_000)
})
