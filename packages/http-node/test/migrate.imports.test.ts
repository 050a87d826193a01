import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { ImportRepo, Migrations } from "@opsplatform/core"
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
            'import_rows', 'import_row_batches', 'import_changes']) AS t`.pipe(Effect.map((rows) => rows.map((r) => r.name)))
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
          // As a database that reached 0015 before 0013 (and so 0016, which builds on it) existed.
          yield* sql`DROP TABLE import_changes, import_row_batches, import_errors, import_jobs`
          yield* sql`DROP INDEX expenses_external_ref_unique`
          yield* sql`ALTER TABLE expenses DROP COLUMN external_ref`
          yield* sql`DELETE FROM opsplatform_migrations WHERE migration_id IN (13, 16)`
          expect(yield* tables(sql)).toEqual([null, null, null, null, null])
          expect(yield* Migrations.applied).toContain("0014_fiscal")
          const first = yield* Migrations.migrateWith()
          const second = yield* Migrations.migrateWith()
          return { first, second, tables: yield* tables(sql), externalRef: yield* externalRef(sql), applied: yield* Migrations.applied }
        }))
        expect(result.first).toEqual([[13, "imports"], [16, "import_row_batches"]])
        expect(result.second).toEqual([])
        expect(result.tables).toEqual(["import_jobs", "import_errors", null, "import_row_batches", "import_changes"])
        expect(result.externalRef).toBe(1)
        expect(result.applied).toEqual(Migrations.known)
      } finally {
        await isolated.drop()
      }
    }, 120_000)
  })

  describe(`migration 0016 on a database with rows staged one per row (${db.name})`, () => {
    it("moves them into batches of 1000 the apply reads back in order, and drops the old table", async () => {
      const isolated = await isolatedDatabase(db, "migrate16")
      try {
        const tenant = { organizationId: "00000000-0000-4000-8000-0000000000a1", environment: "live" as const }
        const jobId = "00000000-0000-4000-8000-0000000000b1"
        const result = await Effect.runPromise(Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* Migrations.migrate
          // Back to 0015: the staging table as 0013 made it, holding a previewed job's 2 500 rows.
          yield* sql`DROP TABLE import_row_batches`
          yield* sql`CREATE TABLE import_rows (
            job_id uuid NOT NULL REFERENCES import_jobs(id) ON DELETE CASCADE, row_number integer NOT NULL, match_key text,
            fields jsonb NOT NULL, CONSTRAINT import_rows_pkey PRIMARY KEY (job_id, row_number))`
          yield* sql`DELETE FROM opsplatform_migrations WHERE migration_id = 16`
          yield* sql`INSERT INTO organizations (id, name, created_at) VALUES (${tenant.organizationId}, 'Old', now())`
          yield* sql`INSERT INTO import_jobs (id, organization_id, environment, entity, preset, filename, source, status, mapping,
            columns, preview, created_at, updated_at)
            VALUES (${jobId}, ${tenant.organizationId}, 'live', 'contacts', 'generic', 'old.csv', 'api', 'ready', '{}', '{}', '{}', now(), now())`
          // Row 7 was an error row: the staged numbers have a gap.
          yield* sql`INSERT INTO import_rows (job_id, row_number, match_key, fields)
            SELECT ${jobId}, n, CASE WHEN n % 2 = 0 THEN 'RO:' || n END, jsonb_build_object('name', 'Firma ' || n, 'active', true)
            FROM generate_series(1, 2501) n WHERE n <> 7`
          const applied = yield* Migrations.migrateWith()
          const repo = yield* ImportRepo.ImportRepo
          const batches: Array<ReadonlyArray<{ row: number; key: string | null }>> = []
          for (let after = 0;;) {
            const rows = yield* repo.stagedRows(tenant, jobId, after)
            if (rows.length === 0) break
            batches.push(rows.map((r) => ({ row: r.row, key: r.key })))
            after = rows[rows.length - 1]!.row
          }
          const [first] = yield* repo.stagedRows(tenant, jobId, 0)
          const [old] = yield* sql<{ name: string | null }>`SELECT to_regclass('import_rows')::text AS name`
          return { applied, batches, first, old: old!.name }
        }).pipe(Effect.provide(ImportRepo.ImportRepo.layerSql), Effect.provide(layerSql(isolated.choice))) as Effect.Effect<any>)
        expect(result.applied).toEqual([[16, "import_row_batches"]])
        expect(result.batches.map((b: ReadonlyArray<unknown>) => b.length)).toEqual([999, 1000, 501])
        const rows = result.batches.flat()
        expect(rows.map((r: { row: number }) => r.row)).toEqual(Array.from({ length: 2501 }, (_, i) => i + 1).filter((n) => n !== 7))
        expect(rows[1]).toEqual({ row: 2, key: "RO:2" })
        expect(rows[0]).toEqual({ row: 1, key: null })
        expect(result.first).toEqual({ row: 1, key: null, fields: { name: "Firma 1", active: true } })
        expect(result.old).toBeNull()
      } finally {
        await isolated.drop()
      }
    }, 120_000)
  })
}
