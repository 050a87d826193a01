import { Effect, Schema } from "effect"
import { CurrentRequestId } from "./requestContext.ts"
import { Errors } from "@opsplatform/core"

/**
 * The error half of the envelope: `{ data: null, error: { code, message,
 * details?, requestId } }`. One class per status so the OpenAPI document and
 * typed clients know each response; the `code` inside tells errors apart.
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

export class BadRequestError extends Schema.Error<BadRequestError>("BadRequestError")(fields, {
  httpApiStatus: 400,
  description: "The request is malformed: `validation_failed` (with one detail per failing field), `invalid_json`, or a rule-specific code"
}) {}
export class UnauthorizedError extends Schema.Error<UnauthorizedError>("UnauthorizedError")(fields, {
  httpApiStatus: 401,
  description: "`unauthorized`: the bearer token is missing, malformed, unknown, expired or revoked"
}) {}
export class ForbiddenError extends Schema.Error<ForbiddenError>("ForbiddenError")(fields, {
  httpApiStatus: 403,
  description: "`insufficient_scope`: the credential lacks the operation's scope"
}) {}
export class NotFoundError extends Schema.Error<NotFoundError>("NotFoundError")(fields, {
  httpApiStatus: 404,
  description: "`not_found`: no such resource in this organization environment"
}) {}
export class ConflictError extends Schema.Error<ConflictError>("ConflictError")(fields, {
  httpApiStatus: 409,
  description: "`invalid_transition` (a state change the rules forbid) or `conflict`"
}) {}
export class PayloadTooLargeError extends Schema.Error<PayloadTooLargeError>("PayloadTooLargeError")(fields, {
  httpApiStatus: 413,
  description: "`payload_too_large`"
}) {}
export class UnsupportedMediaTypeError
  extends Schema.Error<UnsupportedMediaTypeError>("UnsupportedMediaTypeError")(fields, {
    httpApiStatus: 415,
    description: "`unsupported_media_type`: send application/json"
  })
{}
export class UnprocessableError extends Schema.Error<UnprocessableError>("UnprocessableError")(fields, {
  httpApiStatus: 422,
  description: "A well-formed request the rules cannot carry out, e.g. `route_has_no_stops`"
}) {}
export class RateLimitedError extends Schema.Error<RateLimitedError>("RateLimitedError")(fields, {
  httpApiStatus: 429,
  description: "`rate_limited`, with `Retry-After` and `retryAfterSec`"
}) {}
export class InternalError extends Schema.Error<InternalError>("InternalError")(fields, {
  httpApiStatus: 500,
  description: "`internal_error`: something failed on our side; the request id identifies it in the logs"
}) {}
export class NotImplementedError extends Schema.Error<NotImplementedError>("NotImplementedError")(fields, {
  httpApiStatus: 501,
  description: "The capability is not available, e.g. `STT_UNAVAILABLE`"
}) {}

export type ApiError =
  | BadRequestError
  | UnauthorizedError
  | ForbiddenError
  | NotFoundError
  | ConflictError
  | PayloadTooLargeError
  | UnsupportedMediaTypeError
  | UnprocessableError
  | RateLimitedError
  | InternalError
  | NotImplementedError


const classByStatus = {
  400: BadRequestError,
  401: UnauthorizedError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  415: UnsupportedMediaTypeError,
  422: UnprocessableError,
  429: RateLimitedError,
  500: InternalError,
  501: NotImplementedError
} as const

export type ApiStatus = keyof typeof classByStatus

export const apiErrorBody = (status: number, body: ErrorBody): ApiError => {
  const Class = classByStatus[status as ApiStatus] ?? InternalError
  return new Class({ data: null, error: body })
}

/** Builds the envelope error of a status, stamped with the current request id. */
export const apiError = (
  status: ApiStatus,
  code: string,
  message: string,
  extra?: { readonly details?: ReadonlyArray<{ field: string; issue: string }>; readonly retryAfterSec?: number }
): Effect.Effect<ApiError> =>
  Effect.map(CurrentRequestId, (requestId) =>
    apiErrorBody(status, {
      code,
      message,
      requestId,
      ...(extra?.details ? { details: extra.details } : {}),
      ...(extra?.retryAfterSec !== undefined ? { retryAfterSec: extra.retryAfterSec } : {})
    }))

const statusOf = (e: Errors.DomainError): ApiStatus => {
  switch (e._tag) {
    case "NotFound":
      return 404
    case "Conflict":
    case "InvalidTransition":
      return 409
    case "ValidationFailed":
    case "BadRequest":
      return 400
    case "Unprocessable":
      return 422
    case "RateLimited":
      return 429
    case "NotImplemented":
      return 501
    case "Unauthorized":
      return 401
    case "InsufficientScope":
      return 403
  }
}

/** The one translation from a domain failure to its envelope error. */
export const fromDomain = (e: Errors.DomainError): Effect.Effect<ApiError> =>
  apiError(statusOf(e), e.code, e.message, {
    ...(e._tag === "ValidationFailed" ? { details: e.details } : {}),
    ...(e._tag === "RateLimited" ? { retryAfterSec: e.retryAfterSec } : {})
  })

/**
 * Pipe a core call through this in a handler: domain failures become their
 * envelope errors, anything else stays as it is.
 */
export const domain = <A, E, R>(
  self: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, Errors.DomainError> | ApiError, R> =>
  Effect.catch(
    self,
    (e): Effect.Effect<never, any> => Errors.isDomainError(e) ? Effect.flatMap(fromDomain(e), Effect.fail) : Effect.fail(e)
  )
