import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { coreSettingsFrom, databaseChoiceFromEnv, serverSettingsFrom } from "../src/config/Configuration.ts"
import { type Variable, variables } from "../src/config/variables.ts"
import { environment, formatEnvironment } from "../src/cli/doctor.ts"
import { layerTest } from "../src/config/Configuration.ts"

const readme = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../README.md")
const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../src")

/** The README's row of a variable. */
const row = (v: Variable<unknown>) =>
  `| \`${v.name}\` | ${v.processes.join(", ")} | ${v.absent.replace(/\|/g, "\\|")} | ${v.description.replace(/\|/g, "\\|")} |`

const table = ["| variable | read by | when not set | what it does |", "|---|---|---|---|", ...variables.map(row)].join("\n")

describe("the configuration's declaration", () => {
  it("is the README's environment table, row for row", () => {
    const text = fs.readFileSync(readme, "utf8")
    const start = text.indexOf("<!-- environment:start -->")
    const end = text.indexOf("<!-- environment:end -->")
    expect(start, "README.md has the environment table between its markers").toBeGreaterThan(-1)
    expect(text.slice(start + "<!-- environment:start -->".length, end).trim(), "README.md's table; the expected one follows").toBe(table)
  })

  it("names each variable once, and every variable the source reads", () => {
    const names = variables.map((v) => v.name)
    expect(new Set(names).size).toBe(names.length)
    const read = new Set<string>()
    const walk = (dir: string): void => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name)
        if (entry.isDirectory()) walk(file)
        else if (file.endsWith(".ts")) {
          for (const m of fs.readFileSync(file, "utf8").matchAll(/\b(OPSPLATFORM_[A-Z0-9_]*[A-Z0-9]|DATABASE_URL|DATABASE_POOL_SIZE)\b/g)) read.add(m[1]!)
        }
      }
    }
    walk(src)
    expect([...read].filter((name) => !names.includes(name)).sort()).toEqual([])
  })

  it("gives every default when nothing is set", () => {
    const core = coreSettingsFrom({})
    expect(core.database).toMatchObject({ _tag: "Embedded" })
    expect(core.webhooks.settings).toMatchObject({ timeoutMs: 15_000, leaseMs: 45_000, allowPrivateDestinations: false })
    expect(core.metering.forwarding.leaseMs).toBe(60_000)
    expect(serverSettingsFrom({})).toEqual({
      port: 8080,
      publicUrl: undefined,
      trustedProxies: [],
      jobs: { obligationsIntervalSec: 60, pulseIntervalSec: 10, fiscalCheckHour: 6, fiscalIntervalSec: 300 }
    })
  })

  it("counts an empty value as not set, and names a malformed one (never a secret's value)", () => {
    expect(databaseChoiceFromEnv({ DATABASE_URL: "" })).toMatchObject({ _tag: "Embedded" })
    expect(() => serverSettingsFrom({ PORT: "http" })).toThrow("PORT must be a port number from 0 to 65535, got 'http'")
    expect(() => coreSettingsFrom({ OPSPLATFORM_WEBHOOKS_SCHEDULE_MS: "5s,10s" })).toThrow(
      "OPSPLATFORM_WEBHOOKS_SCHEDULE_MS must be comma-separated milliseconds, got '5s,10s'"
    )
    const error = (() => {
      try {
        coreSettingsFrom({ OPSPLATFORM_STRIPE_LIVE_KEY: "sk_test_secret" })
      } catch (e) {
        return (e as Error).message
      }
    })()
    expect(error).toBe("OPSPLATFORM_STRIPE_LIVE_KEY must be a Stripe secret key starting with sk_live_ or rk_live_")
    expect(() => coreSettingsFrom({ OPSPLATFORM_WEBHOOKS_TIMEOUT_MS: "40000" })).not.toThrow()
    expect(coreSettingsFrom({ OPSPLATFORM_WEBHOOKS_TIMEOUT_MS: "40000" }).webhooks.settings.leaseMs).toBe(55_000)
  })

  it("is what `opsplatform doctor` lists: each variable, whether set, never a value", async () => {
    const rows = await Effect.runPromise(
      environment.pipe(Effect.provide(layerTest({ PORT: "9000", OPSPLATFORM_SECRET_KEY: "a-secret-value" })))
    )
    expect(rows.map((r) => r.name)).toEqual(variables.map((v) => v.name))
    expect(rows.filter((r) => r.set).map((r) => r.name).sort()).toEqual(["OPSPLATFORM_SECRET_KEY", "PORT"])
    const text = formatEnvironment(rows)
    expect(text).toContain("OPSPLATFORM_PULSE_INTERVAL_SEC")
    expect(text).toContain("not set: 10")
    expect(text).not.toContain("a-secret-value")
    expect(text).not.toContain("9000")
  })
})
