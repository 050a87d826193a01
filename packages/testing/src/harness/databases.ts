import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { Migrations } from "@opsplatform/core"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { TestProject } from "vitest/node"
import { sharedFixture } from "./once.ts"

declare module "vitest" {
  export interface ProvidedContext {
    /** A migrated embedded database dumped to a file: each test loads its own copy in well under a second. */
    pgliteTemplate: string
    /**
     * With DATABASE_URL: the server to make per-file databases on and the
     * migrated database they are cloned from; `null` without it.
     */
    postgresTemplate: PostgresTemplate | null
  }
}

export interface PostgresTemplate {
  /** DATABASE_URL as given: the connection used to create and drop databases. */
  readonly adminUrl: string
  /** The migrated template database; per-file databases are named after it. */
  readonly template: string
}

/** Runs statements on the PostgreSQL of `url` over one connection of their own. */
export const onPostgres = (url: string, statements: ReadonlyArray<string>) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const results: Array<ReadonlyArray<unknown>> = []
      for (const statement of statements) results.push(yield* sql.unsafe(statement))
      return results
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })))
  )

/** The URL of database `name` on the server of `url`. */
export const databaseUrl = (url: string, name: string) => {
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}

const migrate = (layer: ReturnType<typeof PgClient.layer>) => Effect.runPromise(Migrations.migrate.pipe(Effect.provide(layer)))

const pgliteTemplate = sharedFixture("pglite-template", async () => {
  const db = await PGlite.create("memory://")
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 1 })
  await server.start()
  const port = (server as unknown as { server: { address(): { port: number } } }).server.address().port
  await migrate(PgClient.layer({ host: "127.0.0.1", port, username: "postgres", database: "postgres", maxConnections: 1 }))
  await server.stop()
  const dump = await db.dumpDataDir("none")
  await db.close()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "opsplatform-pglite-"))
  const file = path.join(dir, "template.tar")
  fs.writeFileSync(file, Buffer.from(await dump.arrayBuffer()))
  return { value: file, stop: async () => fs.rmSync(dir, { recursive: true, force: true }) }
})

/**
 * A migrated database on the DATABASE_URL server that every test file clones
 * (`CREATE DATABASE … TEMPLATE`, a tenth of a second) into a database of its
 * own, so files running in parallel never share rows, sequences, LISTEN
 * channels or advisory locks. Dropped at the end of the run with every clone.
 */
const postgresTemplate = sharedFixture("postgres-template", async () => {
  const adminUrl = process.env.DATABASE_URL!
  const template = `opsplatform_test_${randomBytes(4).toString("hex")}`
  await onPostgres(adminUrl, [`CREATE DATABASE ${template}`]).catch((cause) => {
    throw new Error(`DATABASE_URL is set but its PostgreSQL cannot be reached or refuses CREATE DATABASE: ${String(cause)}`)
  })
  await migrate(PgClient.layer({ url: Redacted.make(databaseUrl(adminUrl, template)), maxConnections: 1 }))
  const value: PostgresTemplate = { adminUrl, template }
  return {
    value,
    stop: async () => {
      const [rows] = await onPostgres(adminUrl, [`SELECT datname FROM pg_database WHERE datname LIKE '${template}%'`])
      const names = (rows as ReadonlyArray<{ readonly datname: string }>).map((r) => r.datname)
      // The clones first: a template cannot be dropped while another database is being made from it.
      names.sort((a, b) => b.length - a.length)
      await onPostgres(adminUrl, names.map((name) => `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    }
  }
})

/**
 * The one test-database setup (a vitest `globalSetup`), shared by every
 * project of a run: the migrated PGlite template always, and with
 * DATABASE_URL the migrated PostgreSQL template — failing the whole run when
 * that server cannot be reached.
 */
export default async function setup(project: TestProject) {
  const [pglite, postgres] = await Promise.all([
    pgliteTemplate(),
    process.env.DATABASE_URL ? postgresTemplate() : Promise.resolve(undefined)
  ])
  project.provide("pgliteTemplate", pglite.value)
  project.provide("postgresTemplate", postgres?.value ?? null)
  return async () => {
    await pglite.release()
    await postgres?.release()
  }
}
