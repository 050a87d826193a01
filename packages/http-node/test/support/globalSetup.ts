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
    pgliteTemplate: string
  }
}

/**
 * Once per run: a migrated PGlite data directory dumped to a file, which every
 * test file loads instead of running initdb (about 5 s) itself; and, when
 * DATABASE_URL is set, the migrations applied to that PostgreSQL, failing the
 * whole run if it cannot be reached.
 */
export default async function setup(project: TestProject) {
  const db = await PGlite.create("memory://")
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 2 })
  await server.start()
  const port = (server as unknown as { server: { address(): { port: number } } }).server.address().port
  await Effect.runPromise(
    Migrations.migrate.pipe(
      Effect.provide(PgClient.layer({ host: "127.0.0.1", port, username: "postgres", database: "postgres", maxConnections: 1 }))
    )
  )
  await server.stop()
  const dump = await db.dumpDataDir("none")
  await db.close()
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "opsplatform-pglite-")), "template.tar")
  fs.writeFileSync(file, Buffer.from(await dump.arrayBuffer()))
  project.provide("pgliteTemplate", file)

  if (process.env.DATABASE_URL) {
    await Effect.runPromise(
      Migrations.migrate.pipe(
        Effect.provide(PgClient.layer({ url: Redacted.make(process.env.DATABASE_URL), maxConnections: 1 }))
      )
    ).catch((cause) => {
      throw new Error(`DATABASE_URL is set but its PostgreSQL cannot be migrated: ${String(cause)}`)
    })
  }
  return () => fs.rmSync(path.dirname(file), { recursive: true, force: true })
}
