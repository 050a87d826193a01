import { ByteSize, Cause, Clock, Effect } from "effect"
import { SecureRandom } from "effect/crypto"
import { HttpEffect, HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { HttpServerResponse as Response } from "effect/http/HttpServerResponse"
import { Secrets } from "@opsplatform/core"
import { CurrentRequestId, RequestLogFacts } from "../api/requestContext.ts"

/** Largest request body the API reads. */
export const MAX_BODY_BYTES = 1024 * 1024


const codeByStatus: Record<number, string> = {
  400: "bad_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  406: "not_acceptable",
  408: "request_timeout",
  409: "conflict",
  413: "payload_too_large",
  415: "unsupported_media_type",
  422: "unprocessable",
  429: "rate_limited",
  500: "internal_error",
  501: "not_implemented",
  503: "unavailable"
}

const envelope = (status: number, requestId: string, message: string, code = codeByStatus[status] ?? "error") =>
  HttpServerResponse.jsonUnsafe(
    { data: null, error: { code, message, requestId } },
    { status }
  )

/**
 * A `\u0000` escape in a JSON body (one not itself escaped as `\\u0000`).
 * PostgreSQL cannot store NUL in text or jsonb, so such a body is refused up
 * front as the caller's mistake rather than failing in the database.
 */
const nulEscape = /(?:^|[^\\])(?:\\\\)*\\u0000/i

export const containsNulEscape = (json: string): boolean => nulEscape.test(json)

const isJsonRequest = (request: HttpServerRequest.HttpServerRequest) =>
  request.method !== "GET" && request.method !== "HEAD" &&
  (request.headers["content-type"] ?? "").toLowerCase().startsWith("application/json")

/** Refuses a JSON body holding a NUL character; lets every other body through (read errors are the API's to report). */
const refuseNul = (request: HttpServerRequest.HttpServerRequest, requestId: string) =>
  isJsonRequest(request)
    ? request.text.pipe(
      Effect.map((text) =>
        containsNulEscape(text)
          ? HttpServerResponse.jsonUnsafe({
            data: null,
            error: {
              code: "validation_failed",
              message: "Invalid body: strings must not contain the NUL character (\\u0000)",
              details: [{ field: "body", issue: "strings must not contain the NUL character (\\u0000)" }],
              requestId
            }
          }, { status: 400 })
          : undefined
      ),
      Effect.orElseSucceed(() => undefined)
    )
    : Effect.succeed(undefined)

/** Fits a response made outside the API handlers (router misses, framework refusals) into the envelope. */
const ensureEnvelope = (response: Response, requestId: string, method: string, path: string): Response => {
  if (response.status < 400) return response
  const type = response.headers["content-type"] ?? ""
  // JSON errors (the envelope, or RFC 6749 errors of the OAuth endpoints) and HTML error pages are already complete.
  if ((type.startsWith("application/json") || type.startsWith("text/html")) && response.body._tag === "Uint8Array") {
    return response
  }
  switch (response.status) {
    case 404:
      return envelope(404, requestId, `No route for ${method} ${path}`)
    case 405:
      return envelope(405, requestId, `${method} is not allowed on ${path}`)
    case 413:
      return envelope(413, requestId, `The request body exceeds ${MAX_BODY_BYTES} bytes`)
    case 415:
      return envelope(415, requestId, "Send the request body as application/json")
    default:
      return envelope(response.status, requestId, response.status >= 500 ? "Internal error" : "The request was refused")
  }
}

/**
 * Wraps every request: assigns the request id, refuses oversized bodies before
 * reading them, fits anything that did not come from an API handler (router
 * misses, framework refusals, defects) into the envelope, stamps
 * `X-Request-Id`, and writes one log line with the request id, credential id,
 * status and duration (never a header or body, so never a token).
 *
 * The server sends the response inside `app`, so the envelope and the header
 * are applied by a pre-response handler rather than after `app` returns.
 */
export const apiMiddleware = <E, R>(
  app: Effect.Effect<Response, E, R>
): Effect.Effect<Response, E, R | HttpServerRequest.HttpServerRequest | SecureRandom.SecureRandom> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const started = yield* Clock.currentTimeNanos
    const random = yield* SecureRandom.SecureRandom
    const requestId = `req_${Secrets.encodeHex(yield* random.randomBytes(12))}`
    const path = request.url.split("?")[0] ?? request.url
    const facts: { credentialId?: string; organizationId?: string } = {}
    let status = 0
    const finish = (response: Response) => {
      const final = HttpServerResponse.setHeader(ensureEnvelope(response, requestId, request.method, path), "x-request-id", requestId)
      status = final.status
      return final
    }
    const writeLog = Effect.gen(function*() {
      const durationMs = Number((yield* Clock.currentTimeNanos) - started) / 1e6
      yield* Effect.logInfo("request").pipe(Effect.annotateLogs({
        requestId,
        method: request.method,
        path,
        status,
        durationMs: Math.round(durationMs * 100) / 100,
        credentialId: facts.credentialId ?? null,
        organizationId: facts.organizationId ?? null
      }))
    })
    const length = Number(request.headers["content-length"] ?? "0")
    if (length > MAX_BODY_BYTES) {
      const response = finish(envelope(413, requestId, `The request body exceeds ${MAX_BODY_BYTES} bytes`))
      yield* writeLog
      return response
    }
    yield* HttpEffect.appendPreResponseHandler((_request, response) => Effect.succeed(finish(response)))
    return yield* Effect.flatMap(
      refuseNul(request, requestId),
      (refused): Effect.Effect<Response, E, R> => refused === undefined ? app : Effect.succeed(refused)
    ).pipe(
      Effect.provideService(CurrentRequestId, requestId),
      Effect.provideService(RequestLogFacts, facts),
      Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(MAX_BODY_BYTES)),
      Effect.onExit((exit) =>
        Effect.andThen(
          exit._tag === "Failure" && !Cause.hasInterruptsOnly(exit.cause) && status >= 500
            ? Effect.logError("request failed", exit.cause).pipe(Effect.annotateLogs({ requestId }))
            : Effect.void,
          writeLog
        )
      )
    )
  })
