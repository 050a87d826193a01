import { Effect } from "effect"
import type { SqlError } from "effect/sql"
import { Conflict } from "./errors.ts"
import { countOne, databaseStatementErrors } from "./metrics.ts"

/** Counts a failed statement by its kind (a connection lost, a constraint, ...), never by its text. */
const counted = <A, R>(self: Effect.Effect<A, SqlError.SqlError, R>): Effect.Effect<A, SqlError.SqlError, R> =>
  Effect.tapError(self, (error) => countOne(databaseStatementErrors, { reason: error.reason._tag }))

/**
 * Storage failures are not part of any operation's contract: a broken
 * connection or a bad statement is a defect, logged and answered with a 500.
 */
export const orDie = <A, R>(self: Effect.Effect<A, SqlError.SqlError, R>): Effect.Effect<A, never, R> =>
  Effect.orDie(counted(self))

/** The constraint a violation names: unique violations carry it, other constraint errors keep it on the driver's cause. */
const violatedConstraint = (error: SqlError.SqlError): string | undefined => {
  const reason = error.reason
  if (reason._tag === "UniqueViolation") return reason.constraint
  if (reason._tag === "ConstraintError") {
    const constraint = (reason.cause as { readonly constraint?: unknown } | undefined)?.constraint
    return typeof constraint === "string" ? constraint : undefined
  }
  return undefined
}

/**
 * Like `orDie`, but a violation of one of `constraints` (a unique index, or a
 * foreign key that refuses a delete) becomes a 409 with that message.
 */
export const uniqueAsConflict = (constraints: Record<string, string>) =>
<A, R>(self: Effect.Effect<A, SqlError.SqlError, R>): Effect.Effect<A, Conflict, R> =>
  Effect.catch(counted(self), (error) => {
    const constraint = violatedConstraint(error)
    const message = constraint === undefined ? undefined : constraints[constraint]
    return message === undefined ? Effect.die(error) : Effect.fail(new Conflict({ reason: message }))
  })
