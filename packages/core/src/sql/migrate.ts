import { Data, Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { migrations } from "./migrations/index.ts"

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
 * The migrations a database still needs: every known id it has not applied,
 * in order — also an id below the highest applied one, so a migration that
 * was numbered while a later one already shipped (0013 after 0014) is still
 * applied (decided: docs/decisions.md, "Imports").
 */
export const pendingOf = (done: ReadonlyArray<string>): ReadonlyArray<string> => {
  const appliedIds = new Set(done.map(idOf))
  return known.filter((key) => !appliedIds.has(idOf(key)))
}

/**
 * Applies every pending migration, reporting to `progress`. Safe to run from
 * several processes at once: the advisory lock lets one apply and the others
 * wait and find nothing to do. Every migration and its record commit together
 * with the others, or none does.
 */
export const migrateWith = (progress?: MigrationProgress) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Serialize concurrent starters on one PostgreSQL; the lock ends with the transaction.
    return yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(72710001)`
      yield* sql`CREATE TABLE IF NOT EXISTS ${sql(MIGRATIONS_TABLE)} (
        migration_id integer PRIMARY KEY,
        created_at timestamptz NOT NULL DEFAULT now(),
        name text NOT NULL
      )`
      const pending = pendingOf(yield* applied)
      if (progress !== undefined) yield* progress.onStart(pending)
      const done: Array<readonly [number, string]> = []
      for (const key of pending) {
        const id = idOf(key)
        const name = key.slice(key.indexOf("_") + 1)
        yield* Effect.mapError(migrations[key]!, (cause) => new MigrationFailed({ migration: key, cause }))
        yield* sql`INSERT INTO ${sql(MIGRATIONS_TABLE)} ${sql.insert({ migration_id: id, name })}`
        if (progress !== undefined) yield* progress.onApplied(key)
        done.push([id, name] as const)
      }
      return done as ReadonlyArray<readonly [number, string]>
    }))
  })

/** A migration that failed; the run rolled back with it. */
export class MigrationFailed extends Data.TaggedError("MigrationFailed")<{
  readonly migration: string
  readonly cause: unknown
}> {
  override get message() {
    return `Migration ${this.migration} failed: ${this.cause instanceof Error ? this.cause.message : String(this.cause)}`
  }
}

/** Applies every pending migration. */
export const migrate = migrateWith()
