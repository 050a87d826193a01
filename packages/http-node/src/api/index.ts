/**
 * `@opsplatform/http-node/api`: the /v1 API contract without the server — the
 * `HttpApi` definition, its error classes and envelopes, and a typed client
 * for Effect programs. Nothing here needs Node: it runs in browsers and edge
 * runtimes as well (test/api.browser.test.ts loads it in Chromium).
 */

// The definition every operation, the OpenAPI document and the clients derive from.
export { Api } from "./Api.ts"

// The client for Effect programs, its retries with `Idempotency-Key`, and paging by cursor.
export { type Client, type ClientOptions, idempotentRetries, makeClient, paginate } from "./client.ts"

// The envelopes around every response: `{ data, error: null, meta? }`.
export { Envelope, ListEnvelope } from "./envelope.ts"

// One error class per status, each `{ data: null, error: { code, message, details?, requestId } }`.
export {
  type ApiError,
  BadRequestError,
  ConflictError,
  ErrorBody,
  ErrorDetail,
  ForbiddenError,
  InternalError,
  NotFoundError,
  NotImplementedError,
  PayloadTooLargeError,
  RateLimitedError,
  statusTable,
  UnauthorizedError,
  UnprocessableError,
  UnsupportedMediaTypeError
} from "./errors.ts"

// The scope each endpoint requires, as an annotation (`Context.get(endpoint.annotations, RequiredScope)`).
export { RequiredScope } from "./security.ts"
