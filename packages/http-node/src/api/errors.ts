import { Effect, Schema } from "effect"
import { HttpEffect, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { Errors } from "@opsplatform/core"
import { CurrentRequestId } from "./requestContext.ts"

/**
 * The error half of the envelope: `{ data: null, error: { code, message,
 * details?, requestId } }`. One class per status, so the OpenAPI document and
 * typed clients know each response; the `code` inside tells errors apart.
 *
 * `statusTable` below is the one place that relates a status to its error
 * class, its default code and its description: the API answers domain errors
 * through it (a domain error carries its own status and code), the server
 * middleware reads the default code of responses it makes itself (router
 * misses, oversized bodies), and the OpenAPI document gets the classes.
 */
export const ErrorDetail = Schema.Struct({ field: Schema.String, issue: Schema.String })

export const ErrorBody = Schema.Struct({
  code: Schema.String,
  message: Schema.String,
  details: Schema.optionalKey(Schema.Array(ErrorDetail)),
  requestId: Schema.String,
  retryAfterSec: Schema.optionalKey(Schema.Int)
}).annotate({ identifier: "Error" })
export type ErrorBody = typeof ErrorBody.Type

const fields = { data: Schema.Null, error: ErrorBody }

/*
 * The classes share one wire shape; each declares its status as a type-only
 * member so they are distinct types, and a handler that can fail with a 409
 * type-checks only on an endpoint that declares ConflictError.
 */

export class BadRequestError extends Schema.Error<BadRequestError>("BadRequestError")(fields, {
  httpApiStatus: 400,
  description: "The request is malformed: `validation_failed` (with one detail per failing field), `invalid_json`, or a rule-specific code"
}) {
  declare readonly status: 400
}
export class UnauthorizedError extends Schema.Error<UnauthorizedError>("UnauthorizedError")(fields, {
  httpApiStatus: 401,
  description: "`unauthorized`: the bearer token is missing, malformed, unknown, expired or revoked"
}) {
  declare readonly status: 401
}
export class ForbiddenError extends Schema.Error<ForbiddenError>("ForbiddenError")(fields, {
  httpApiStatus: 403,
  description: "`insufficient_scope`: the credential lacks the operation's scope"
}) {
  declare readonly status: 403
}
export class NotFoundError extends Schema.Error<NotFoundError>("NotFoundError")(fields, {
  httpApiStatus: 404,
  description: "`not_found`: no such resource in this organization environment"
}) {
  declare readonly status: 404
}
export class ConflictError extends Schema.Error<ConflictError>("ConflictError")(fields, {
  httpApiStatus: 409,
  description: "`invalid_transition` (a state change the rules forbid) or `conflict`"
}) {
  declare readonly status: 409
}
export class PayloadTooLargeError extends Schema.Error<PayloadTooLargeError>("PayloadTooLargeError")(fields, {
  httpApiStatus: 413,
  description: "`payload_too_large`"
}) {
  declare readonly status: 413
}
export class UnsupportedMediaTypeError
  extends Schema.Error<UnsupportedMediaTypeError>("UnsupportedMediaTypeError")(fields, {
    httpApiStatus: 415,
    description: "`unsupported_media_type`: send application/json"
  })
{
  declare readonly status: 415
}
export class UnprocessableError extends Schema.Error<UnprocessableError>("UnprocessableError")(fields, {
  httpApiStatus: 422,
  description: "A well-formed request the rules cannot carry out, e.g. `route_has_no_stops`"
}) {
  declare readonly status: 422
}
export class LockedError extends Schema.Error<LockedError>("LockedError")(fields, {
  httpApiStatus: 423,
  description: "Locked until someone acts, e.g. `unlock_disabled` after 10 wrong PINs in a row"
}) {
  declare readonly status: 423
}
export class RateLimitedError extends Schema.Error<RateLimitedError>("RateLimitedError")(fields, {
  httpApiStatus: 429,
  description: "`rate_limited`, with `Retry-After` and `retryAfterSec`"
}) {
  declare readonly status: 429
}
export class InternalError extends Schema.Error<InternalError>("InternalError")(fields, {
  httpApiStatus: 500,
  description: "`internal_error`: something failed on our side; the request id identifies it in the logs"
}) {
  declare readonly status: 500
}
export class UnavailableError extends Schema.Error<UnavailableError>("UnavailableError")(fields, {
  httpApiStatus: 503,
  description: "`unavailable`: the server is at a bound for the moment (its password and PIN hashing, the database); " +
    "retry after `Retry-After` seconds (also `retryAfterSec`)"
}) {
  declare readonly status: 503
}
export class NotImplementedError extends Schema.Error<NotImplementedError>("NotImplementedError")(fields, {
  httpApiStatus: 501,
  description: "The capability is not available, e.g. `STT_UNAVAILABLE`"
}) {
  declare readonly status: 501
}

/**
 * Every status the server answers with: its error class where an operation
 * can declare it, and the code of a response the server makes itself.
 */
export const statusTable = {
  400: { Class: BadRequestError, code: "bad_request" },
  401: { Class: UnauthorizedError, code: "unauthorized" },
  403: { Class: ForbiddenError, code: "forbidden" },
  404: { Class: NotFoundError, code: "not_found" },
  405: { Class: undefined, code: "method_not_allowed" },
  406: { Class: undefined, code: "not_acceptable" },
  408: { Class: undefined, code: "request_timeout" },
  409: { Class: ConflictError, code: "conflict" },
  413: { Class: PayloadTooLargeError, code: "payload_too_large" },
  415: { Class: UnsupportedMediaTypeError, code: "unsupported_media_type" },
  422: { Class: UnprocessableError, code: "unprocessable" },
  423: { Class: LockedError, code: "locked" },
  429: { Class: RateLimitedError, code: "rate_limited" },
  431: { Class: undefined, code: "request_header_fields_too_large" },
  500: { Class: InternalError, code: "internal_error" },
  501: { Class: NotImplementedError, code: "not_implemented" },
  503: { Class: UnavailableError, code: "unavailable" }
} as const

type Table = typeof statusTable

/** The statuses an operation can declare (those with an error class). */
export type ApiStatus = { [S in keyof Table]: Table[S]["Class"] extends undefined ? never : S }[keyof Table]

/** The envelope error class of a status. */
export type ApiErrorOf<S extends ApiStatus> = InstanceType<NonNullable<Table[S]["Class"]>>

export type ApiError = ApiErrorOf<ApiStatus>

/** The code of a response with this status that no operation produced (a router miss, a refused body). */
export const defaultCode = (status: number): string =>
  (statusTable as Record<number, { readonly code: string } | undefined>)[status]?.code ?? "error"

export const apiErrorBody = <S extends ApiStatus>(status: S, body: ErrorBody): ApiErrorOf<S> => {
  const Class = statusTable[status].Class as unknown as new(props: { data: null; error: ErrorBody }) => ApiErrorOf<S>
  return new Class({ data: null, error: body })
}

/** Builds the envelope error of a status, stamped with the current request id. */
export const apiError = <S extends ApiStatus>(
  status: S,
  code: string,
  message: string,
  extra?: { readonly details?: ReadonlyArray<{ field: string; issue: string }>; readonly retryAfterSec?: number }
): Effect.Effect<ApiErrorOf<S>> =>
  Effect.map(CurrentRequestId, (requestId) =>
    apiErrorBody(status, {
      code,
      message,
      requestId,
      ...(extra?.details ? { details: extra.details } : {}),
      ...(extra?.retryAfterSec !== undefined ? { retryAfterSec: extra.retryAfterSec } : {})
    }))

/** The envelope error a domain error answers with: its own status and code. */
export type ApiErrorFor<E> = E extends { readonly status: infer S extends ApiStatus } ? ApiErrorOf<S> : never

/** The one translation from a domain failure to its envelope error. */
export const fromDomain = <E extends Errors.DomainError>(e: E): Effect.Effect<ApiErrorFor<E>> =>
  apiError(e.status, e.code, e.message, {
    ...(e._tag === "ValidationFailed" ? { details: e.details } : {}),
    ...(e._tag === "RateLimited" || e._tag === "HashingBusy" ? { retryAfterSec: e.retryAfterSec } : {})
  }) as Effect.Effect<ApiErrorFor<E>>

/** A refusal that says when to come back (429, 503) says it in `Retry-After` as well as in the body. */
const retryAfterOf = (e: Errors.DomainError) =>
  e._tag === "RateLimited" || e._tag === "HashingBusy"
    ? HttpEffect.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(e.retryAfterSec)))
    )
    : Effect.void

/**
 * Pipe a core call through this in a handler: each domain failure becomes the
 * envelope error of its status, typed, so the compiler checks it against the
 * errors the endpoint declares; anything else stays as it is.
 */
export const domain = <A, E, R>(
  self: Effect.Effect<A, E, R>
): Effect.Effect<
  A,
  Exclude<E, Errors.DomainError> | ApiErrorFor<Extract<E, Errors.DomainError>>,
  R | HttpServerRequest.HttpServerRequest
> =>
  Effect.catch(
    self,
    (e): Effect.Effect<
      never,
      Exclude<E, Errors.DomainError> | ApiErrorFor<Extract<E, Errors.DomainError>>,
      HttpServerRequest.HttpServerRequest
    > =>
      Errors.isDomainError(e)
        ? Effect.andThen(
          retryAfterOf(e),
          Effect.flatMap(fromDomain(e), (error) => Effect.fail(error as ApiErrorFor<Extract<E, Errors.DomainError>>))
        )
        : Effect.fail(e as Exclude<E, Errors.DomainError>)
  )

/**
 * The status an error of a handler answers with: its envelope class's, found
 * also inside the wrapper a security middleware sees it in; anything else
 * (a defect) is a 500.
 */
export const statusOfError = (error: unknown): number => {
  for (const candidate of [error, (error as { readonly error?: unknown } | null)?.error]) {
    for (const [status, entry] of Object.entries(statusTable)) {
      if (entry.Class !== undefined && candidate instanceof entry.Class) return Number(status)
    }
  }
  return 500
}
