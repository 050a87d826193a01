import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { Migrations } from "@opsplatform/core"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    opsplatformTemplate: string
  }
}

/**
 * Once per test run: a migrated embedded database dumped to a file (initdb and
 * the migrations take seconds; loading the dump well under one), and, with
 * DATABASE_URL, the migrations applied to that PostgreSQL, failing the run
 * when it cannot be reached.
 */
export default async function setup(project: TestProject) {
  const db = await PGlite.create("memory://")
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 1 })
  await server.start()
  const port = (server as unknown as { server: { address(): { port: number } } }).server.address().port
  await Effect.runPromise(Migrations.migrate.pipe(
    Effect.provide(PgClient.layer({ host: "127.0.0.1", port, username: "postgres", database: "postgres", maxConnections: 1 }))
  ))
  await server.stop()
  const dump = await db.dumpDataDir("none")
  await db.close()
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "opsplatform-examples-")), "template.tar")
  fs.writeFileSync(file, Buffer.from(await dump.arrayBuffer()))
  project.provide("opsplatformTemplate", file)

  if (process.env.DATABASE_URL) {
    await Effect.runPromise(Migrations.migrate.pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(process.env.DATABASE_URL), maxConnections: 1 }))
    )).catch((cause) => {
      throw new Error(`DATABASE_URL is set but its PostgreSQL cannot be migrated: ${String(cause)}`)
    })
  }
  return () => fs.rmSync(path.dirname(file), { recursive: true, force: true })
}
