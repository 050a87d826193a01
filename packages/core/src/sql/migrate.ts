import { Effect } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { migrations } from "./migrations/index.ts"

const run = Migrator.make({})

/** The table the migrator records applied migrations in. */
export const MIGRATIONS_TABLE = "opsplatform_migrations"

/** Every migration this version knows, in order, as `NNNN_name`. */
export const known: ReadonlyArray<string> = Object.keys(migrations).sort()

const idOf = (key: string) => Number(key.slice(0, key.indexOf("_")))

/** The migrations a database has applied, as `NNNN_name`, in order; none before the first migration. */
export const applied: Effect.Effect<ReadonlyArray<string>, SqlError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [table] = yield* sql<{ readonly name: string | null }>`SELECT to_regclass(${MIGRATIONS_TABLE})::text AS name`
  if (table?.name == null) return []
  const rows = yield* sql<{ readonly migration_id: number; readonly name: string }>`
    SELECT migration_id, name FROM ${sql(MIGRATIONS_TABLE)} ORDER BY migration_id`
  return rows.map((r) => `${String(r.migration_id).padStart(4, "0")}_${r.name}`)
})

/** What a caller sees of a migration run: the pending list once, then each migration as it is applied. */
export interface MigrationProgress {
  readonly onStart: (pending: ReadonlyArray<string>) => Effect.Effect<void>
  readonly onApplied: (migration: string) => Effect.Effect<void>
}

/**
 * Applies every pending migration, reporting to `progress`. Safe to run from
 * several processes at once: the advisory lock lets one apply and the others
 * wait and find nothing to do.
 */
export const migrateWith = (progress?: MigrationProgress) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Serialize concurrent starters on one PostgreSQL; the lock ends with the transaction.
    return yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(72710001)`
      if (progress === undefined) return yield* run({ loader: Migrator.fromRecord(migrations), table: MIGRATIONS_TABLE })
      // The migrator applies only ids above the highest applied one; the pending list follows the same rule.
      const done = yield* applied
      const highest = done.length === 0 ? 0 : idOf(done[done.length - 1]!)
      yield* progress.onStart(known.filter((key) => idOf(key) > highest))
      const reporting = Object.fromEntries(
        Object.entries(migrations).map(([key, migration]) => [key, Effect.tap(migration, () => progress.onApplied(key))])
      )
      return yield* run({ loader: Migrator.fromRecord(reporting), table: MIGRATIONS_TABLE })
    }))
  })

/** Applies every pending migration. */
export const migrate = migrateWith()
