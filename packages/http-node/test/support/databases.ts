import * as fs from "node:fs"
import { inject } from "vitest"
import type { DatabaseChoice } from "../../src/server/database.ts"

export interface TestDatabase {
  readonly name: "pglite" | "postgres"
  readonly choice: () => DatabaseChoice
}

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
  if (process.env.DATABASE_URL) {
    list.push({ name: "postgres", choice: () => ({ _tag: "Postgres", url: process.env.DATABASE_URL!, maxConnections: 4 }) })
  }
  return list
}
