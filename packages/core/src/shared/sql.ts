import { Effect, Option } from "effect"
import type { SqlError } from "effect/sql"
import { Conflict } from "./errors.ts"

/**
 * Storage failures are not part of any operation's contract: a broken
 * connection or a bad statement is a defect, logged and answered with a 500.
 */
export const orDie = <A, R>(self: Effect.Effect<A, SqlError.SqlError, R>): Effect.Effect<A, never, R> =>
  Effect.orDie(self)

/** Like `orDie`, but a unique violation of one of `constraints` becomes a 409 with that message. */
export const uniqueAsConflict = (constraints: Record<string, string>) =>
<A, R>(self: Effect.Effect<A, SqlError.SqlError, R>): Effect.Effect<A, Conflict, R> =>
  Effect.catch(self, (error) => {
    const reason = error.reason
    if (reason._tag === "UniqueViolation") {
      const message = constraints[reason.constraint]
      if (message !== undefined) return Effect.fail(new Conflict({ reason: message }))
    }
    return Effect.die(error)
  })

/** The first row of a result, decoded, if there is one. */
export const firstRow = <A>(decode: (row: any) => A) => (rows: ReadonlyArray<any>): Option.Option<A> =>
  Option.map(Option.fromNullishOr(rows[0]), decode)

/** A space-separated column (scopes, grant types) as its words. */
export const spaceSeparated = (value: unknown): Array<string> => String(value).split(" ").filter((s) => s !== "")
