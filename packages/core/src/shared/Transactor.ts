import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Runs a unit of work atomically: every repository call inside commits or
 * rolls back together. Services wrap each operation that changes more than one
 * row (or writes an outbox event) in `withTransaction`.
 */
export class Transactor extends Context.Service<Transactor, {
  readonly withTransaction: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Runs `effect` once the outermost transaction commits (immediately outside one). */
  readonly afterCommit: (effect: Effect.Effect<void>) => Effect.Effect<void>
}>()("@opsplatform/core/shared/Transactor") {
  static readonly layerSql: Layer.Layer<Transactor, never, SqlClient.SqlClient> = Layer.effect(
    Transactor,
    Effect.map(SqlClient.SqlClient, (sql) =>
      Transactor.of({
        withTransaction: (self) => sql.withTransaction(self).pipe(Effect.catchTag("SqlError", (e) => Effect.die(e))),
        afterCommit: (effect) => sql.afterCommit(effect)
      }))
  )
}
