import { NodeServices } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { Console, Effect, Fiber } from "effect"
import { Command } from "effect/cli"
import { DeliveryRepo, Migrations } from "@opsplatform/core"
import { SqlClient } from "effect/sql"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { opsplatform } from "../src/cli/command.ts"
import { checkMigrations, checkNode, checkSecretKey, checkWorkers, formatChecks } from "../src/cli/doctor.ts"
import { progressBar, renderProgress } from "../src/cli/progress.ts"
import { coreSettingsFrom, layerTest } from "../src/config/Configuration.ts"
import { LoggingLive } from "../src/server/logging.ts"
import { assertBuilt, bin, runCli } from "./support/cli.ts"
import { testDatabases } from "./support/databases.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"

/** A console that keeps what it is given. */
const recordingConsole = () => {
  const lines: Array<string> = []
  const write = (...args: ReadonlyArray<unknown>) => lines.push(args.map(String).join(" "))
  const console: Console.Console = Object.assign(Object.create(globalThis.console), { log: write, error: write, info: write, warn: write })
  return { console, text: () => lines.join("\n") }
}

/** Every command of the tree with the words that invoke it. */
const commandsOf = (command: Command.Command.Any, prefix: ReadonlyArray<string> = []): Array<{ path: ReadonlyArray<string>; command: Command.Command.Any }> => [
  { path: prefix, command },
  ...command.subcommands.flatMap((group) => group.commands.flatMap((sub) => commandsOf(sub, [...prefix, sub.name])))
]

describe("opsplatform --help", () => {
  const all = commandsOf(opsplatform)

  it("covers every command, nested ones included", () => {
    const paths = all.map((c) => c.path.join(" "))
    for (const expected of ["", "serve", "worker", "migrate", "doctor", "admin", "admin create-key", "jobs", "jobs run", "jobs run obligations"]) {
      expect(paths).toContain(expected)
    }
  })

  it.each(all.map((c) => [c.path.join(" ") || "(root)", c] as const))("%s explains itself: description, usage, flags", async (_name, { path: words, command }) => {
    expect(command.description, "every command has a description").toMatch(/\w{3,}/)
    const { console, text } = recordingConsole()
    await Effect.runPromise(
      Command.runWith(opsplatform, { version: "0.1.0" })([...words, "--help"]).pipe(
        Effect.provideService(Console.Console, console),
        Effect.provide(NodeServices.layer)
      )
    )
    const help = text()
    expect(help).toContain(command.description!)
    expect(help).toContain(`USAGE\n  opsplatform${words.length ? " " + words.join(" ") : ""}`)
    if (command.subcommands.length > 0) {
      for (const sub of command.subcommands.flatMap((g) => g.commands)) expect(help).toContain(sub.name)
    }
  })

  it("the installed binary answers --help with exit status 0", async () => {
    assertBuilt()
    const res = await runCli(["--help"], {})
    expect(res.code, res.stderr).toBe(0)
    expect(res.stdout).toContain("doctor")
    expect(res.stdout).toContain("Check the Node.js version")
  })
})

describe("the progress bar", () => {
  const tty = (columns = 80) => {
    const chunks: Array<string> = []
    return { isTTY: true, columns, write: (chunk: string) => chunks.push(chunk), chunks }
  }

  it("renders done over total with the current label, and fits the terminal", () => {
    expect(renderProgress("migrate", 3, 8, "0003_obligations", 120)).toBe("migrate [#########---------------] 3/8 0003_obligations")
    expect(renderProgress("migrate", 8, 8, "", 120)).toBe(`migrate [${"#".repeat(24)}] 8/8`)
    expect(renderProgress("import", 0, 8, "", 120)).toBe(`import [${"-".repeat(24)}] 0/8`)
    const narrow = renderProgress("migrate", 3, 8, "a very long label that does not fit", 40)
    expect(narrow.length).toBeLessThanOrEqual(39)
    expect(narrow.endsWith("…")).toBe(true)
  })

  it("rewrites one line on a terminal and ends it once", async () => {
    const stream = tty()
    const bar = progressBar("import", 4, stream)
    await Effect.runPromise(Effect.all([bar.advance(1, "rows 1-100"), bar.advance(2, "rows 101-300"), bar.done, bar.done, bar.advance()]))
    expect(stream.chunks.every((c) => c === "\n" || c.startsWith("\r\x1b[2K"))).toBe(true)
    expect(stream.chunks.filter((c) => c === "\n")).toHaveLength(1)
    expect(stream.chunks.at(-2)).toContain("3/4")
    expect(stream.chunks[1]).toContain("rows 1-100")
  })

  it("draws nothing where the stream is not a terminal (a log file, a pipe)", async () => {
    const chunks: Array<string> = []
    const bar = progressBar("import", 4, { isTTY: false, write: (c: string) => chunks.push(c) })
    await Effect.runPromise(Effect.all([bar.advance(2), bar.done]))
    expect(chunks).toEqual([])
  })
})

describe("OPSPLATFORM_LOG_FORMAT", () => {
  const logged = async (env: Record<string, string>) => {
    const { console, text } = recordingConsole()
    await Effect.runPromise(
      Effect.logInfo("listening").pipe(
        Effect.annotateLogs({ url: "http://localhost:8080" }),
        Effect.provide(LoggingLive),
        Effect.provide(layerTest(env)),
        Effect.provideService(Console.Console, console)
      )
    )
    return text()
  }

  it("is JSON by default: one object a line, for log collectors", async () => {
    const line = JSON.parse(await logged({}))
    expect(line).toMatchObject({ message: "listening", level: "INFO", annotations: { url: "http://localhost:8080" } })
  })

  it("pretty: time, level and message, then the annotations, for people", async () => {
    const text = await logged({ OPSPLATFORM_LOG_FORMAT: "pretty" })
    expect(() => JSON.parse(text)).toThrow()
    expect(text).toMatch(/\[\d\d:\d\d:\d\d\.\d{3}\] INFO .*listening/)
    expect(text).toContain("url: http://localhost:8080")
  })

  it("an unknown format logs JSON and says which formats exist", async () => {
    const lines = (await logged({ OPSPLATFORM_LOG_FORMAT: "xml" })).split("\n").map((l) => JSON.parse(l))
    expect(lines.map((l) => l.message)).toContain("listening")
    expect(lines.find((l) => l.level === "WARN").message).toContain("must be one of json, pretty, got 'xml'")
  })
})

describe("opsplatform doctor", () => {
  it("passes this Node.js and fails an older one, saying what to install", () => {
    expect(checkNode()).toMatchObject({ status: "ok" })
    const old = checkNode("20.20.2")
    expect(old).toMatchObject({ status: "fail", detail: "Node.js 20.20.2 is older than 22.19.0" })
    expect(old.fix).toContain("22.19.0 or later")
    expect(checkNode("22.19.0").status).toBe("ok")
    expect(checkNode("22.18.9").status).toBe("fail")
  })

  it("checks the secret key PostgreSQL needs", () => {
    const pg = { _tag: "Postgres", url: "postgres://x@127.0.0.1/db" } as const
    const key = (text?: string) => coreSettingsFrom(text === undefined ? {} : { OPSPLATFORM_SECRET_KEY: text }).secretKey
    expect(checkSecretKey(pg, key())).toMatchObject({ status: "fail", fix: expect.stringContaining("openssl rand -base64 32") })
    expect(checkSecretKey(pg, key("short"))).toMatchObject({ status: "fail", detail: expect.stringContaining("must be 32 bytes") })
    expect(checkSecretKey(pg, key(Buffer.alloc(32, 7).toString("base64"))).status).toBe("ok")
  })

  describe("from the command line, on a new embedded data directory", () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "opsplatform-doctor-"))
    const env = { OPSPLATFORM_DATA_DIR: dataDir, DATABASE_URL: undefined, OPSPLATFORM_SECRET_KEY: undefined }
    beforeAll(() => assertBuilt())
    afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))

    it("says there is no database yet and how to create it, without creating one", async () => {
      const res = await runCli(["doctor"], env)
      expect(res.code).toBe(1)
      expect(res.stdout).toMatch(/^ok {4}node {8}Node\.js /m)
      expect(res.stdout).toContain(`FAIL  database    embedded database in ${dataDir}: no database there yet`)
      expect(res.stdout).toContain("fix: run `opsplatform migrate` or `opsplatform serve` to create it")
      expect(res.stdout).toContain("1 problem(s) to fix.")
      expect(fs.existsSync(path.join(dataDir, "pglite"))).toBe(false)
      expect(fs.existsSync(path.join(dataDir, "secret.key"))).toBe(false)
    })

    it("migrate draws its progress bar on a terminal, and doctor then finds nothing to fix", async () => {
      // `script` gives the command a pseudo-terminal, as an operator's shell does.
      const { stdout } = await promisify(execFile)("script", ["-qec", `${process.execPath} ${bin} migrate`, "/dev/null"], {
        env: { ...process.env, OPSPLATFORM_DATA_DIR: dataDir, DATABASE_URL: "", COLUMNS: "100" }
      })
      expect(stdout).toMatch(new RegExp(`migrate \\[#{24}\\] ${Migrations.known.length}/${Migrations.known.length}`))
      expect(stdout).toContain("0001_foundation")
      expect(stdout).toContain(`{"applied":["0001_foundation"`)

      const res = await runCli(["doctor", "--json"], env)
      const report = JSON.parse(res.stdout)
      expect(report.checks.map((c: { check: string; status: string }) => `${c.check}:${c.status}`)).toEqual(
        // `migrate` leaves the key file to the first `serve`, and no public URL is set: warnings, not problems.
        ["node:ok", "database:ok", "migrations:ok", "webhook worker:ok", "secret key:warn", "public URL:warn"]
      )
      expect(report.ok).toBe(true)
      expect(res.code).toBe(0)
    }, 120_000)
  })

  for (const db of testDatabases()) {
    describe(`against the database (${db.name})`, () => {
      let server: TestServer
      beforeAll(async () => {
        // No background jobs: nothing delivers, so what the server queues stays waiting.
        server = await startTestServer(db.choice(), { env: { OPSPLATFORM_WEBHOOKS_ALLOW_PRIVATE: "true" } })
      })
      afterAll(() => server.close())

      const sql = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
        server.run(Effect.flatMap(SqlClient.SqlClient, f))

      it("names pending migrations and migrations this version does not know", async () => {
        expect(await server.run(checkMigrations)).toMatchObject({ status: "ok", detail: `all ${Migrations.known.length} applied` })
        if (db.name === "postgres") return // the database is shared with other tests: its migrations stay
        await sql((s) => s`DELETE FROM opsplatform_migrations WHERE migration_id = 7`)
        expect(await server.run(checkMigrations)).toMatchObject({
          status: "fail",
          detail: "1 pending: 0007_audit",
          fix: expect.stringContaining("opsplatform migrate")
        })
        await sql((s) => s`INSERT INTO opsplatform_migrations (migration_id, name) VALUES (7, 'audit'), (9999, 'from_the_future')`)
        expect(await server.run(checkMigrations)).toMatchObject({
          status: "fail",
          detail: "the database has migrations this version does not know: 9999_from_the_future",
          fix: expect.stringContaining("upgrade")
        })
        await sql((s) => s`DELETE FROM opsplatform_migrations WHERE migration_id = 9999`)
      })

      it("says no worker delivers when deliveries wait past their time, and counts the listening workers", async () => {
        const choice = db.choice()
        const f = await seedFixture(server, "Doctor org")
        const created = await call(server, "POST", "/v1/webhooks", {
          token: f.tokens.sandbox,
          body: { url: "http://127.0.0.1:9/hooks", event_types: ["invoice.paid"] }
        })
        expect(created.status, created.text).toBe(201)
        const ping = await call(server, "POST", `/v1/webhooks/${created.json.data.id}/test`, { token: f.tokens.sandbox })
        expect(ping.status, ping.text).toBeLessThan(300)
        await sql((s) => s`UPDATE webhook_deliveries SET next_attempt_at = now() - interval '5 minutes' WHERE subscription_id = ${created.json.data.id}`)

        const waiting = await server.run(checkWorkers(choice))
        expect(waiting.status).toMatch(db.name === "postgres" ? /^(fail|warn)$/ : /^fail$/)
        expect(waiting.detail).toMatch(/\d+ deliveries/)
        expect(waiting.fix).toBeDefined()
        expect(formatChecks([waiting])).toContain("fix: ")

        if (db.name === "postgres") {
          // A connection listening on the deliveries' channel is what a live worker looks like.
          const listener = await server.run(Effect.forkDetach(Effect.scoped(Effect.andThen(
            Effect.flatMap(PgClient.PgClient, (pg) => pg.listen(DeliveryRepo.DELIVERY_CHANNEL)),
            Effect.never
          ))))
          try {
            await expect.poll(async () => (await server.run(checkWorkers(choice))).detail, { timeout: 10_000 })
              .toMatch(/^[1-9]\d* process\(es\) deliver webhooks, yet [1-9]\d* deliveries have waited/)
          } finally {
            await server.run(Fiber.interrupt(listener))
          }
        }
        await sql((s) => s`DELETE FROM webhook_deliveries WHERE subscription_id = ${created.json.data.id}`)
        if (db.name === "pglite") expect((await server.run(checkWorkers(choice))).status).toBe("ok")
      })
    })
  }
})
