import { Cause, ConfigProvider, Console, Effect, Option, type Redacted } from "effect"
import { Command, Flag } from "effect/cli"
import { SqlClient } from "effect/sql"
import { DeliveryRepo, Migrations } from "@opsplatform/core"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { coreConfig, load, serverConfig } from "../config/Configuration.ts"
import { variables } from "../config/variables.ts"
import { type DatabaseChoice, embeddedHolder, layerSql } from "../server/database.ts"
import { failCommand } from "./process.ts"
import { publicUrlIssue } from "../oauth/protocol.ts"
import { resolveOperatorKey } from "../server/webhooks.ts"

/**
 * `opsplatform doctor`: what an operator checks before calling for help, each
 * with what to do about it. It reads and never writes: no database is
 * created, no migration applied, no key file generated.
 */

export type CheckStatus = "ok" | "warn" | "fail"

export interface Check {
  readonly check: string
  readonly status: CheckStatus
  readonly detail: string
  readonly fix?: string | undefined
}

const ok = (check: string, detail: string): Check => ({ check, status: "ok", detail })
const warn = (check: string, detail: string, fix?: string): Check => ({ check, status: "warn", detail, fix })
const fail = (check: string, detail: string, fix: string): Check => ({ check, status: "fail", detail, fix })

/** An error's message, followed by its causes' (a driver's "failed to connect" says why only in its cause). */
const message = (e: unknown): string => {
  const own = typeof e === "object" && e !== null && "message" in e ? String(e.message) : String(e)
  const cause = typeof e === "object" && e !== null && "cause" in e && e.cause !== undefined ? message(e.cause) : ""
  return cause === "" || own.includes(cause) ? own : cause.includes(own) ? cause : `${own}: ${cause}`
}

/** The Node.js versions the package declares (`engines.node`, `>=X.Y.Z`). */
const requiredNode = (): string => {
  const manifest = createRequire(import.meta.url)("../../package.json") as { engines: { node: string } }
  return manifest.engines.node.replace(/^>=\s*/, "")
}

const atLeast = (version: string, minimum: string) => {
  const a = version.split(".").map(Number)
  const b = minimum.split(".").map(Number)
  for (let i = 0; i < 3; i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0)
  }
  return true
}

export const checkNode = (version = process.versions.node): Check => {
  const minimum = requiredNode()
  return atLeast(version, minimum)
    ? ok("node", `Node.js ${version} (needs ${minimum} or later)`)
    : fail("node", `Node.js ${version} is older than ${minimum}`, `install Node.js ${minimum} or later (the repository's \`npm ci\` brings Node 24 as a dev dependency)`)
}

const describeDatabase = (choice: DatabaseChoice): string => {
  switch (choice._tag) {
    case "Postgres": {
      const url = new URL(choice.url)
      return `PostgreSQL ${url.hostname}:${url.port || "5432"}${url.pathname}`
    }
    case "Embedded":
      return `embedded database in ${choice.dataDir}`
    default:
      return "in-memory embedded database"
  }
}

export const checkSecretKey = (choice: DatabaseChoice, secretKey: Option.Option<Redacted.Redacted<string>>): Check => {
  const configured = Option.isSome(secretKey)
  if (choice._tag === "Embedded" && !configured) {
    const file = path.join(choice.dataDir, "secret.key")
    if (!fs.existsSync(file)) {
      return warn("secret key", `no key file at ${file} yet`, "none needed: `opsplatform serve` generates it on first start (or set OPSPLATFORM_SECRET_KEY)")
    }
  }
  try {
    const key = resolveOperatorKey(choice, secretKey)
    if (key._tag === "None") {
      return fail(
        "secret key",
        "OPSPLATFORM_SECRET_KEY is not set; on PostgreSQL `serve` and `worker` refuse to start without it",
        "set OPSPLATFORM_SECRET_KEY to 32 bytes as base64 (`openssl rand -base64 32`), the same on every process"
      )
    }
    return ok("secret key", configured ? "OPSPLATFORM_SECRET_KEY holds 32 bytes" : `key file ${path.join((choice as { dataDir: string }).dataDir, "secret.key")}`)
  } catch (e) {
    return fail("secret key", message(e), "set OPSPLATFORM_SECRET_KEY to 32 bytes as base64 or 64 hex digits")
  }
}

export const checkMigrations = Effect.gen(function*() {
  const applied = yield* Migrations.applied
  const unknown = applied.filter((m) => !Migrations.known.includes(m))
  if (unknown.length > 0) {
    return fail(
      "migrations",
      `the database has migrations this version does not know: ${unknown.join(", ")}`,
      "it was migrated by a newer version: upgrade @opsplatform/http-node"
    )
  }
  const pending = Migrations.known.filter((m) => !applied.includes(m))
  return pending.length === 0
    ? ok("migrations", `all ${applied.length} applied`)
    : fail("migrations", `${pending.length} pending: ${pending.join(", ")}`, "run `opsplatform migrate` (`serve` also applies them at start)")
})

/** Deliveries that should have been attempted more than a minute ago, and since when. */
const overdueDeliveries = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql<{ readonly count: string | number; readonly since: Date | string | null }>`
      SELECT count(*) AS count, min(coalesce(locked_until, next_attempt_at)) AS since FROM webhook_deliveries
      WHERE (status IN ('pending', 'failed') AND next_attempt_at < now() - interval '1 minute')
         OR (status = 'sending' AND locked_until < now() - interval '1 minute')`,
    ([row]) => ({ count: Number(row?.count ?? 0), since: row?.since == null ? undefined : new Date(row.since).toISOString() })
  )

/**
 * Workers wait for deliveries with LISTEN on the outbox's channel, so on
 * PostgreSQL the connections listening on it are the live workers (`serve`
 * and `worker` processes); work waiting long past its time says the same
 * from the other side. See docs/decisions.md, "Client, examples and packaging".
 */
export const checkWorkers = (choice: DatabaseChoice) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const overdue = yield* overdueDeliveries(sql)
    const start = "start `opsplatform serve` (it delivers in-process) or `opsplatform worker`"
    if (choice._tag !== "Postgres") {
      return overdue.count > 0
        ? fail("webhook worker", `${overdue.count} deliveries waiting since ${overdue.since} and no server holds the database`, start)
        : ok("webhook worker", "no delivery is waiting; webhooks are sent while `opsplatform serve` runs")
    }
    const [listening] = yield* sql<{ readonly count: string | number }>`
      SELECT count(*) AS count FROM pg_stat_activity
      WHERE datname = current_database() AND query ILIKE 'LISTEN %' AND position(${DeliveryRepo.DELIVERY_CHANNEL} in query) > 0`
    const workers = Number(listening?.count ?? 0)
    if (workers === 0) {
      return overdue.count > 0
        ? fail("webhook worker", `no process delivers webhooks, and ${overdue.count} deliveries have waited since ${overdue.since}`, start)
        : warn("webhook worker", "no process delivers webhooks (nothing is waiting yet)", start)
    }
    return overdue.count > 0
      ? warn(
        "webhook worker",
        `${workers} process(es) deliver webhooks, yet ${overdue.count} deliveries have waited since ${overdue.since}`,
        "look for errors in the workers' logs; with many deliveries due, start more `opsplatform worker` processes"
      )
      : ok("webhook worker", `${workers} process(es) deliver webhooks; nothing is overdue`)
  })

/** The checks that need the database, or why they could not run. */
const databaseChecks = (choice: DatabaseChoice): Effect.Effect<ReadonlyArray<Check>> => {
  const where = describeDatabase(choice)
  if (choice._tag === "Embedded") {
    const holder = embeddedHolder(choice.dataDir)
    if (holder !== undefined) {
      return Effect.succeed([
        ok("database", `${where} is open in process ${holder} (a running \`serve\`)`),
        warn("migrations", "not checked: the embedded database serves one process at a time", "stop the server and run `opsplatform doctor` again, or use PostgreSQL"),
        ok("webhook worker", `process ${holder} holds the database and delivers webhooks in-process`)
      ])
    }
    if (!fs.existsSync(path.join(choice.dataDir, "pglite"))) {
      return Effect.succeed([
        fail("database", `${where}: no database there yet`, "run `opsplatform migrate` or `opsplatform serve` to create it, or set DATABASE_URL")
      ])
    }
  }
  return Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const started = Date.now()
    yield* sql`SELECT 1`
    const reachable = ok("database", `${where} answers (${Date.now() - started} ms)`)
    const migrations = yield* checkMigrations
    if (migrations.status === "fail") return [reachable, migrations]
    return [reachable, migrations, yield* checkWorkers(choice)]
  }).pipe(
    Effect.provide(layerSql(choice)),
    Effect.timeout("10 seconds"),
    Effect.catchCause((cause) =>
      Effect.succeed([fail(
        "database",
        `${where} cannot be reached: ${message(Cause.squash(cause))}`,
        choice._tag === "Postgres"
          ? "check DATABASE_URL (host, port, database, user, password) and that PostgreSQL runs and accepts connections from here"
          : "check that the data directory is readable and not damaged (OPSPLATFORM_DATA_DIR)"
      )])
    )
  )
}

/**
 * The OAuth issuer and the root of every OAuth address: without a public URL
 * the server names itself only to clients on this machine or behind a trusted
 * proxy (docs/decisions.md, "OAuth 2.0").
 */
export const checkPublicUrl = (publicUrl: string | undefined, trustedProxies: number): Check => {
  if (publicUrl === undefined) {
    return warn(
      "public URL",
      trustedProxies > 0
        ? "OPSPLATFORM_PUBLIC_URL is not set: the OAuth issuer follows the Host that the trusted proxies pass on"
        : "OPSPLATFORM_PUBLIC_URL is not set: OAuth names this server by its Host only for clients on this machine (localhost)",
      "set OPSPLATFORM_PUBLIC_URL to the address clients use, e.g. https://ops.example.com"
    )
  }
  const issue = publicUrlIssue(publicUrl)
  return issue === undefined
    ? ok("public URL", `the OAuth issuer is ${publicUrl}`)
    : fail("public URL", `OPSPLATFORM_PUBLIC_URL ${issue}`, "set it to an absolute http(s) URL with no query or fragment")
}

/** Every check, in the order they are printed. */
export const runChecks: Effect.Effect<ReadonlyArray<Check>> = Effect.gen(function*() {
  const configured = yield* Effect.exit(load(coreConfig))
  if (configured._tag === "Failure") {
    return [checkNode(), fail("configuration", message(Cause.squash(configured.cause)), "correct or unset the variable it names")]
  }
  const { database, secretKey } = configured.value
  const server = yield* Effect.exit(load(serverConfig))
  const publicUrl = server._tag === "Failure"
    ? fail("configuration", message(Cause.squash(server.cause)), "correct or unset the variable it names")
    : checkPublicUrl(server.value.publicUrl, server.value.trustedProxies.length)
  return [checkNode(), ...yield* databaseChecks(database), checkSecretKey(database, secretKey), publicUrl]
})

/**
 * Every environment variable the processes read (`src/config/variables.ts`):
 * its name, whether it is set (never a secret's value), what its absence
 * means, which processes read it and what it does.
 */
export const environment = Effect.gen(function*() {
  const provider = yield* ConfigProvider.ConfigProvider
  return yield* Effect.forEach(variables, (v) =>
    Effect.map(
      Effect.orElseSucceed(provider.load([v.name]), () => undefined),
      (node) => ({
        name: v.name,
        set: node !== undefined && node._tag === "Value" && node.value.trim() !== "",
        absent: v.absent,
        processes: v.processes,
        description: v.description
      })
    ))
})

type EnvironmentRow = Effect.Success<typeof environment>[number]

/** The variables as lines for a person: set or what its absence means, then what it does. */
export const formatEnvironment = (rows: ReadonlyArray<EnvironmentRow>): string => {
  const width = Math.max(...rows.map((r) => r.name.length))
  return ["Environment (each variable, whether it is set, and what it does):", ...rows.flatMap((r) => [
    `  ${r.name.padEnd(width)}  ${r.set ? "set" : `not set: ${r.absent}`}`,
    `  ${" ".repeat(width)}  ${r.description} [${r.processes.join(", ")}]`
  ])].join("\n")
}

const marks: Record<CheckStatus, string> = { ok: "ok  ", warn: "warn", fail: "FAIL" }

/** The checks as lines for a person: status, name, detail, and what to do. */
export const formatChecks = (checks: ReadonlyArray<Check>): string => {
  const width = Math.max(...checks.map((c) => c.check.length))
  const lines = checks.flatMap((c) => [
    `${marks[c.status]}  ${c.check.padEnd(width)}  ${c.detail}`,
    ...(c.fix === undefined ? [] : [`      ${" ".repeat(width)}  fix: ${c.fix}`])
  ])
  const failed = checks.filter((c) => c.status === "fail").length
  return [...lines, "", failed === 0 ? "No problems found." : `${failed} problem(s) to fix.`].join("\n")
}

export const doctor = Command.make("doctor", {
  json: Flag.Boolean("json").pipe(Flag.withDescription("Print the checks as JSON instead of text"), Flag.withDefault(false))
}, ({ json }) =>
  Effect.gen(function*() {
    const checks = yield* runChecks
    const variables = yield* environment
    yield* Console.log(
      json
        ? JSON.stringify({ ok: checks.every((c) => c.status !== "fail"), checks, environment: variables })
        : `${formatChecks(checks)}\n\n${formatEnvironment(variables)}`
    )
    if (checks.some((c) => c.status === "fail")) yield* failCommand
  })).pipe(
    Command.withDescription(
      "Check the Node.js version, the database (reachable, migrated), the secret key and the webhook workers, and say what to fix; list every environment variable the processes read"
    )
  )
