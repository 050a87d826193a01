import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { Migrations } from "@opsplatform/core"
import { layerSql } from "../src/server/database.ts"
import { isolatedDatabase, testDatabases } from "./support/databases.ts"

/**
 * Migration 0013 was numbered after 0014 had shipped: a database migrated to
 * 0014 without it must get it from the next `migrate`. Here the database
 * loses 0013 (its record, its tables and its expenses column) and is migrated
 * again, for real.
 */
for (const db of testDatabases()) {
  describe(`migration 0013 on a database already at 0014 (${db.name})`, () => {
    it("is applied by the next migrate, alone, and the one after finds nothing to do", async () => {
      const isolated = await isolatedDatabase(db, "migrate13")
      try {
        const run = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) =>
          Effect.runPromise(Effect.provide(effect, layerSql(isolated.choice)) as Effect.Effect<A>)
        const tables = (sql: SqlClient.SqlClient) =>
          sql<{ name: string | null }>`SELECT to_regclass(t)::text AS name FROM unnest(ARRAY['import_jobs', 'import_errors',
            'import_rows', 'import_changes']) AS t`.pipe(Effect.map((rows) => rows.map((r) => r.name)))
        const externalRef = (sql: SqlClient.SqlClient) =>
          sql<{ n: number }>`SELECT count(*)::int AS n FROM information_schema.columns
            WHERE table_name = 'expenses' AND column_name = 'external_ref' AND table_schema = current_schema()`.pipe(
            Effect.map((rows) => rows[0]!.n)
          )
        const result = await run(Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* Migrations.migrate
          const atHead = yield* Migrations.applied
          expect(atHead).toEqual(Migrations.known)
          // As a database that reached 0014 before 0013 existed.
          yield* sql`DROP TABLE import_changes, import_rows, import_errors, import_jobs`
          yield* sql`DROP INDEX expenses_external_ref_unique`
          yield* sql`ALTER TABLE expenses DROP COLUMN external_ref`
          yield* sql`DELETE FROM opsplatform_migrations WHERE migration_id = 13`
          expect(yield* tables(sql)).toEqual([null, null, null, null])
          expect(yield* Migrations.applied).toContain("0014_fiscal")
          const first = yield* Migrations.migrateWith()
          const second = yield* Migrations.migrateWith()
          return { first, second, tables: yield* tables(sql), externalRef: yield* externalRef(sql), applied: yield* Migrations.applied }
        }))
        expect(result.first).toEqual([[13, "imports"]])
        expect(result.second).toEqual([])
        expect(result.tables).toEqual(["import_jobs", "import_errors", "import_rows", "import_changes"])
        expect(result.externalRef).toBe(1)
        expect(result.applied).toEqual(Migrations.known)
      } finally {
        await isolated.drop()
      }
    }, 120_000)
  })
}
