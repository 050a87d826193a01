/**
 * Every way a verification can fail, as a stable string. Branch on `code`;
 * messages are for people and may change.
 */
export const webhookErrorCodes = Object.freeze([
  "invalid_secret",
  "wrong_key_kind",
  "missing_header",
  "invalid_header",
  "invalid_timestamp",
  "timestamp_too_old",
  "timestamp_too_new",
  "no_matching_signature",
  "invalid_payload",
  "payload_already_parsed",
  "invalid_json",
  "invalid_envelope"
] as const)

export type WebhookErrorCode = (typeof webhookErrorCodes)[number]

const isErrorLike = (value: unknown): value is Error & { code: unknown } => value instanceof Error

/**
 * The one error this package throws (or rejects with) for a webhook that must
 * not be trusted, and for a secret or key that cannot be used.
 */
export class WebhookVerificationError extends Error {
  /**
   * `instanceof` also recognises errors from another copy of this package (its
   * CommonJS and ESM builds loaded side by side, or two installed versions).
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return isErrorLike(value) && value.name === "WebhookVerificationError" &&
      (webhookErrorCodes as ReadonlyArray<unknown>).includes(value.code)
  }

  readonly code: WebhookErrorCode

  constructor(code: WebhookErrorCode, message: string) {
    super(message)
    this.name = "WebhookVerificationError"
    this.code = code
  }
}

export const fail = (code: WebhookErrorCode, message: string): never => {
  throw new WebhookVerificationError(code, message)
}
