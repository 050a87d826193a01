import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import * as fs from "node:fs"
import { inject } from "vitest"
import { CoreLayers, Ids } from "@opsplatform/core"
import { CryptoLive } from "../../src/server/app.ts"
import { type DatabaseChoice, layerMigratedSql } from "../../src/server/database.ts"

export interface TestDatabase {
  readonly name: "pglite" | "postgres"
  readonly choice: () => DatabaseChoice
}

/**
 * This test file's PostgreSQL when DATABASE_URL is set: a database of its own,
 * cloned from the run's migrated template (`@opsplatform/testing/harness`).
 * Suites that need PostgreSQL run `describe.runIf(postgresUrl() !== undefined)`,
 * so without DATABASE_URL they are reported as skipped.
 */
export const postgresUrl = (): string | undefined => process.env.DATABASE_URL || undefined

/**
 * The SQL backends every SQL test runs on: embedded PGlite always (loaded from
 * the migrated template), and PostgreSQL when DATABASE_URL is set. Tests use
 * fresh organizations, so they share a database without cleaning up.
 */
export const testDatabases = (): ReadonlyArray<TestDatabase> => {
  const list: Array<TestDatabase> = [{
    name: "pglite",
    choice: () => ({ _tag: "EmbeddedFromDump", dump: new Blob([fs.readFileSync(inject("pgliteTemplate"))]) })
  }]
  const url = postgresUrl()
  if (url !== undefined) list.push({ name: "postgres", choice: () => ({ _tag: "Postgres", url, maxConnections: 4 }) })
  return list
}

/** Runs one statement on the PostgreSQL of `url`, on a connection of its own. */
export const runOn = (url: string, statement: string) =>
  Effect.runPromise(Effect.flatMap(PgClient.PgClient, (sql) => sql.unsafe(statement)).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })),
    Effect.orDie
  ))

/**
 * A database no other test file's workers can reach: PGlite is private to
 * its file already; on PostgreSQL, a schema of its own (named after `prefix`),
 * created now, which `drop` removes with everything in it. For tests of
 * claims, which are global as workers are. The choice's URL names the schema,
 * so processes started with it as `DATABASE_URL` work there too.
 */
export const isolatedDatabase = async (
  db: TestDatabase,
  prefix: string
): Promise<{ readonly choice: DatabaseChoice; readonly drop: () => Promise<void> }> => {
  const choice = db.choice()
  if (choice._tag !== "Postgres") return { choice, drop: async () => {} }
  const schema = `${prefix}_${process.pid}_${Date.now()}`
  const url = new URL(choice.url)
  url.searchParams.set("options", `-c search_path=${schema}`)
  await runOn(choice.url, `CREATE SCHEMA IF NOT EXISTS ${schema}`)
  return {
    choice: { ...choice, url: url.toString() },
    drop: () => runOn(choice.url, `DROP SCHEMA IF EXISTS ${schema} CASCADE`).then(() => undefined)
  }
}

/** Every storage port on an isolated database (see `isolatedDatabase`), dropped with the layer. */
export const isolatedStorage = (db: TestDatabase, prefix: string) =>
  Layer.unwrap(Effect.acquireRelease(
    Effect.promise(() => isolatedDatabase(db, prefix)),
    (isolated) => Effect.promise(isolated.drop)
  ).pipe(Effect.map((isolated) => storageOn(isolated.choice))))

/** Every storage port on SQL, migrated. */
const storageOn = (choice: DatabaseChoice) =>
  CoreLayers.SqlStorage.pipe(
    Layer.provideMerge(Ids.Ids.layer),
    Layer.provideMerge(CryptoLive),
    Layer.provideMerge(layerMigratedSql(choice))
  )
