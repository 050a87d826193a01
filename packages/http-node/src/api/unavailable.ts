import { Cause, Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { SqlError } from "effect/sql"
import { CurrentRequestId } from "./requestContext.ts"

/**
 * SQLSTATEs of a database that is not there for the moment: connection
 * exceptions (08…), an administrator or crash shutdown and a server starting
 * up (57P01–57P03), too many connections (53300).
 */
const unavailableState = /^(08|57P0[1-3]|53300)/

const isDatabaseUnavailable = (u: unknown): boolean => {
  if (!SqlError.isSqlError(u)) return false
  const reason = u.cause
  if (reason._tag === "ConnectionError") return true
  const native = reason.cause as { readonly code?: unknown } | null | undefined
  return typeof native === "object" && native !== null && typeof native.code === "string" && unavailableState.test(native.code)
}

/** Whether a request failed because PostgreSQL could not be reached (stopped, restarting, failing over). */
export const databaseUnavailable = (cause: Cause.Cause<unknown>): boolean =>
  cause.reasons.some((r) =>
    (Cause.isDieReason(r) && isDatabaseUnavailable(r.defect)) || (Cause.isFailReason(r) && isDatabaseUnavailable(r.error))
  )

/**
 * Answers 503 `unavailable` with Retry-After when PostgreSQL could not be
 * reached, as /readyz says at the same moment, rather than a 500 that reads as
 * a bug (decided: docs/decisions.md, "Limits and ranges"); any other failure
 * goes on as it was.
 */
export const unavailableWhenDatabaseIs = <E, R>(
  effect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
  Effect.catchCause(effect, (cause) =>
    databaseUnavailable(cause)
      ? Effect.gen(function*() {
        const requestId = yield* CurrentRequestId
        yield* Effect.logWarning("database unavailable").pipe(Effect.annotateLogs({ requestId }))
        return HttpServerResponse.jsonUnsafe(
          {
            data: null,
            error: { code: "unavailable", message: "The database is unavailable for the moment; retry shortly", requestId }
          },
          { status: 503, headers: { "retry-after": "1" } }
        )
      })
      : Effect.failCause(cause))

/**
 * The same for the OAuth endpoints, in their own error format: 503 with RFC
 * 6749's `temporarily_unavailable` (and `Cache-Control: no-store`, as every
 * token endpoint answer).
 */
export const oauthUnavailableWhenDatabaseIs = <E, R>(
  effect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
  Effect.catchCause(effect, (cause) =>
    databaseUnavailable(cause)
      ? Effect.gen(function*() {
        const requestId = yield* CurrentRequestId
        yield* Effect.logWarning("database unavailable").pipe(Effect.annotateLogs({ requestId }))
        return HttpServerResponse.jsonUnsafe(
          { error: "temporarily_unavailable", error_description: "The database is unavailable for the moment; retry shortly" },
          { status: 503, headers: { "retry-after": "1", "cache-control": "no-store" } }
        )
      })
      : Effect.failCause(cause))
