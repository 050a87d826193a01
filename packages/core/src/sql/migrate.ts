import { Effect } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { migrations } from "./migrations/index.ts"

const run = Migrator.make({})

/**
 * Applies every pending migration. Safe to run from several processes at once:
 * the migrator's table lock lets one apply and the others wait and find nothing to do.
 */
export const migrate = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Serialize concurrent starters on one PostgreSQL; the lock ends with the transaction.
  return yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(72710001)`
    return yield* run({ loader: Migrator.fromRecord(migrations), table: "opsplatform_migrations" })
  }))
})
