import { Schema } from "effect"

/** Error codes of RFC 6749 §4.1.2.1 and §5.2, RFC 7009 §2.2.1. */
export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "unsupported_response_type"
  | "invalid_scope"
  | "access_denied"
  | "unsupported_token_type"

/**
 * A protocol failure, answered the OAuth way (RFC 6749 §5.2 JSON at the token
 * endpoint, or a redirect with `error` from the authorization endpoint) rather
 * than in the /v1 envelope. `invalid_client` is a 401; everything else a 400.
 */
export class OAuthError extends Schema.TaggedError<OAuthError>()("OAuthError", {
  error: Schema.String,
  description: Schema.String
}) {
  get statusCode(): 400 | 401 {
    return this.error === "invalid_client" ? 401 : 400
  }
  override get message() {
    return `${this.error}: ${this.description}`
  }
}

/**
 * The authorize request names an unknown client or a redirect URI the client
 * did not register: it must never redirect (RFC 6749 §4.1.2.1), so the page
 * shows this instead.
 */
export class AuthorizeTargetInvalid extends Schema.TaggedError<AuthorizeTargetInvalid>()("AuthorizeTargetInvalid", {
  reason: Schema.String
}) {
  override get message() {
    return this.reason
  }
}

/**
 * A consent-page request the page refuses: an unknown or expired authorization
 * request, another browser's request, a missing or wrong CSRF token.
 */
export class InteractionRefused extends Schema.TaggedError<InteractionRefused>()("InteractionRefused", {
  reason: Schema.String,
  status: Schema.Literals([400, 403])
}) {
  override get message() {
    return this.reason
  }
}

/** Wrong email or password; which one is never said. */
export class SignInFailed extends Schema.TaggedError<SignInFailed>()("SignInFailed", {}) {
  override get message() {
    return "The email or password is not correct"
  }
}

/**
 * Too many sign-in attempts in the current window: for one account, from one
 * network (client address) or in one browser session.
 */
export class SignInThrottled extends Schema.TaggedError<SignInThrottled>()("SignInThrottled", {
  retryAfterSec: Schema.Int,
  subject: Schema.optionalKey(Schema.Literals(["account", "network", "session"]))
}) {
  override get message() {
    const minutes = Math.ceil(this.retryAfterSec / 60)
    const from = this.subject === "network"
      ? "from this network"
      : this.subject === "session"
      ? "in this browser"
      : "for this account"
    return `Too many sign-in attempts ${from}. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`
  }
}

/** Too many authorization requests from one network (client address) in the current window. */
export class AuthorizeThrottled extends Schema.TaggedError<AuthorizeThrottled>()("AuthorizeThrottled", {
  retryAfterSec: Schema.Int
}) {
  override get message() {
    return `Too many authorization requests from this network. Try again in ${this.retryAfterSec} seconds.`
  }
}

/** The signed-in member chose an organization they do not belong to, or no environment. */
export class ConsentChoiceInvalid extends Schema.TaggedError<ConsentChoiceInvalid>()("ConsentChoiceInvalid", {
  reason: Schema.String
}) {
  override get message() {
    return this.reason
  }
}
