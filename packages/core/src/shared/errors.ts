import { Schema } from "effect"

/**
 * The domain's failures. Each declares, once, the HTTP status it answers with
 * and its stable `code` (the API error code); adapters read both from the
 * error instead of keeping their own table.
 */

export const ErrorDetail = Schema.Struct({ field: Schema.String, issue: Schema.String })
export type ErrorDetail = typeof ErrorDetail.Type

export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  resource: Schema.String,
  id: Schema.String
}) {
  readonly status = 404
  readonly code = "not_found"
  override get message() {
    return `No ${this.resource} with id '${this.id}'`
  }
}

export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  reason: Schema.String
}) {
  readonly status = 409
  readonly code = "conflict"
  override get message() {
    return this.reason
  }
}

export class InvalidTransition extends Schema.TaggedError<InvalidTransition>()("InvalidTransition", {
  resource: Schema.String,
  from: Schema.String,
  to: Schema.String
}) {
  readonly status = 409
  readonly code = "invalid_transition"
  override get message() {
    return `A ${this.resource} cannot go from ${this.from} to ${this.to}`
  }
}

export class ValidationFailed extends Schema.TaggedError<ValidationFailed>()("ValidationFailed", {
  details: Schema.Array(ErrorDetail)
}) {
  readonly status = 400
  readonly code = "validation_failed"
  override get message() {
    return this.details.length === 1
      ? `Invalid ${this.details[0]!.field}: ${this.details[0]!.issue}`
      : `${this.details.length} fields are invalid: ${this.details.map((d) => d.field).join(", ")}`
  }
  static field(field: string, issue: string): ValidationFailed {
    return new ValidationFailed({ details: [{ field, issue }] })
  }
}

/** A request the rules refuse with a specific code (400 family), e.g. `pin_not_set`. */
export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", {
  errorCode: Schema.String,
  reason: Schema.String
}) {
  readonly status = 400
  get code() {
    return this.errorCode
  }
  override get message() {
    return this.reason
  }
}

/** Well-formed but semantically impossible (422), e.g. `route_has_no_stops`. */
export class Unprocessable extends Schema.TaggedError<Unprocessable>()("Unprocessable", {
  errorCode: Schema.String,
  reason: Schema.String
}) {
  readonly status = 422
  get code() {
    return this.errorCode
  }
  override get message() {
    return this.reason
  }
}

export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  retryAfterSec: Schema.Int,
  limit: Schema.Int,
  windowSec: Schema.Int,
  policy: Schema.String
}) {
  readonly status = 429
  readonly code = "rate_limited"
  override get message() {
    return `Too many requests for ${this.policy}; retry after ${this.retryAfterSec} s`
  }
}

/** A resource locked until someone acts on it (423), e.g. `unlock_disabled` after too many wrong PINs. */
export class Locked extends Schema.TaggedError<Locked>()("Locked", {
  errorCode: Schema.String,
  reason: Schema.String
}) {
  readonly status = 423
  get code() {
    return this.errorCode
  }
  override get message() {
    return this.reason
  }
}

export class NotImplemented extends Schema.TaggedError<NotImplemented>()("NotImplemented", {
  errorCode: Schema.String,
  reason: Schema.String
}) {
  readonly status = 501
  get code() {
    return this.errorCode
  }
  override get message() {
    return this.reason
  }
}

export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  reason: Schema.String
}) {
  readonly status = 401
  readonly code = "unauthorized"
  override get message() {
    return this.reason
  }
}

export class InsufficientScope extends Schema.TaggedError<InsufficientScope>()("InsufficientScope", {
  scope: Schema.String
}) {
  readonly status = 403
  readonly code = "insufficient_scope"
  override get message() {
    return `This credential lacks the scope '${this.scope}'`
  }
}

/**
 * The process's password and PIN hashing is at its bound (503 `unavailable`,
 * with `Retry-After`): see `PasswordHashing`.
 */
export class HashingBusy extends Schema.TaggedError<HashingBusy>()("HashingBusy", {
  retryAfterSec: Schema.Int
}) {
  readonly status = 503
  readonly code = "unavailable"
  override get message() {
    return `The server is busy checking passwords and PINs; retry after ${this.retryAfterSec} s`
  }
}

/** Every domain error class; `DomainError` and `isDomainError` are read from this one list. */
const domainErrorClasses = [
  NotFound,
  Conflict,
  InvalidTransition,
  ValidationFailed,
  BadRequest,
  Unprocessable,
  RateLimited,
  Locked,
  NotImplemented,
  Unauthorized,
  InsufficientScope,
  HashingBusy
] as const

export type DomainError = InstanceType<(typeof domainErrorClasses)[number]>

export const isDomainError = (u: unknown): u is DomainError => domainErrorClasses.some((C) => u instanceof C)
