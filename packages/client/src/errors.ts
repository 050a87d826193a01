/**
 * The error half of the envelope as exceptions: every failed call throws an
 * `ApiError` of the class of its status, carrying the envelope's `code`,
 * `message`, `details` and `requestId`. A call that never got an answer
 * throws a `ConnectionError`.
 */

/** One failing field of a `validation_failed` error. */
export interface ErrorDetail {
  readonly field: string
  readonly issue: string
}

/** The codes the API documents; other codes (rule-specific 409s and 422s) are strings too. */
export type ErrorCode =
  | "validation_failed"
  | "invalid_json"
  | "unauthorized"
  | "insufficient_scope"
  | "not_found"
  | "invalid_transition"
  | "conflict"
  | "payload_too_large"
  | "unsupported_media_type"
  | "rate_limited"
  | "internal_error"
  | (string & {})

export class ApiError extends Error {
  override readonly name: string = "ApiError"
  /** The HTTP status. */
  readonly status: number
  /** What went wrong, for programs: `not_found`, `validation_failed`, … */
  readonly code: ErrorCode
  /** One entry per failing field, for `validation_failed`. */
  readonly details: ReadonlyArray<ErrorDetail>
  /** The request's id (`X-Request-Id`): quote it when asking about a failure. */
  readonly requestId: string | undefined
  /** Seconds to wait before trying again, on 429. */
  readonly retryAfterSec: number | undefined

  constructor(status: number, body: {
    readonly code: string
    readonly message: string
    readonly details?: ReadonlyArray<ErrorDetail> | undefined
    readonly requestId?: string | undefined
    readonly retryAfterSec?: number | undefined
  }) {
    super(body.message)
    this.status = status
    this.code = body.code
    this.details = body.details ?? []
    this.requestId = body.requestId
    this.retryAfterSec = body.retryAfterSec
  }
}

/** 400: `validation_failed` (see `details`), `invalid_json`, or a rule-specific code. */
export class BadRequestError extends ApiError {
  override readonly name = "BadRequestError"
  declare readonly status: 400
}
/** 401: the token is missing, malformed, unknown, expired or revoked. */
export class UnauthorizedError extends ApiError {
  override readonly name = "UnauthorizedError"
  declare readonly status: 401
}
/** 403: the credential lacks the operation's scope. */
export class ForbiddenError extends ApiError {
  override readonly name = "ForbiddenError"
  declare readonly status: 403
}
/** 404: no such resource in this organization environment. */
export class NotFoundError extends ApiError {
  override readonly name = "NotFoundError"
  declare readonly status: 404
}
/** 409: `invalid_transition` or `conflict`. */
export class ConflictError extends ApiError {
  override readonly name = "ConflictError"
  declare readonly status: 409
}
/** 413: the body is larger than the server accepts. */
export class PayloadTooLargeError extends ApiError {
  override readonly name = "PayloadTooLargeError"
  declare readonly status: 413
}
/** 415: the body is not JSON. */
export class UnsupportedMediaTypeError extends ApiError {
  override readonly name = "UnsupportedMediaTypeError"
  declare readonly status: 415
}
/** 422: a well-formed request the rules cannot carry out, e.g. `route_has_no_stops`. */
export class UnprocessableError extends ApiError {
  override readonly name = "UnprocessableError"
  declare readonly status: 422
}
/** 429: too many requests; `retryAfterSec` says how long to wait. */
export class RateLimitedError extends ApiError {
  override readonly name = "RateLimitedError"
  declare readonly status: 429
}
/** 5xx: the server failed; `requestId` identifies the failure in its logs. */
export class ServerError extends ApiError {
  override readonly name = "ServerError"
}

/** The call got no answer (connection refused or lost, DNS, timeout), after any retries. */
export class ConnectionError extends Error {
  override readonly name = "ConnectionError"
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super(message, options)
  }
}

const byStatus: Record<number, new(status: number, body: ConstructorParameters<typeof ApiError>[1]) => ApiError> = {
  400: BadRequestError,
  401: UnauthorizedError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  415: UnsupportedMediaTypeError,
  422: UnprocessableError,
  429: RateLimitedError
}

const isEnvelopeError = (body: unknown): body is { error: { code: string; message: string } } =>
  typeof body === "object" && body !== null && "error" in body && typeof body.error === "object" && body.error !== null &&
  typeof (body.error as { code?: unknown }).code === "string" && typeof (body.error as { message?: unknown }).message === "string"

/** The error a failed response stands for: its envelope's error, or what can be said of a body that is not one (a proxy's page). */
export const errorFromResponse = (response: Response, body: unknown): ApiError => {
  const Class = byStatus[response.status] ?? (response.status >= 500 ? ServerError : ApiError)
  if (isEnvelopeError(body)) return new Class(response.status, body.error)
  return new Class(response.status, {
    code: "unexpected_response",
    message: `The server answered ${response.status} ${response.statusText} without an error envelope`,
    requestId: response.headers.get("x-request-id") ?? undefined
  })
}

/** Whether `error` is an `ApiError`, with this `code` when one is given. */
export const isApiError = (error: unknown, code?: ErrorCode): error is ApiError =>
  error instanceof ApiError && (code === undefined || error.code === code)
