import { ByteSize, Cause, Clock, Effect } from "effect"
import { identity } from "effect/Function"
import { SecureRandom } from "effect/crypto"
import { HttpEffect, HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { HttpServerResponse as Response } from "effect/http/HttpServerResponse"
import { Limits, Secrets } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { defaultCode } from "../api/errors.ts"
import { CurrentRequestId, RequestLogFacts } from "../api/requestContext.ts"
import { matchedRoute, requestAnswered, RequestMetrics, requestsInFlight, UNMATCHED_ROUTE } from "./observability.ts"

/**
 * Largest request body any reader takes unless the route raises it after
 * authentication (`RequestBody` in api/requestBody.ts; docs/decisions.md,
 * "Limits and ranges").
 */
export const MAX_BODY_BYTES = Limits.MAX_BODY_BYTES

const envelope = (status: number, requestId: string, message: string, code = defaultCode(status)) =>
  HttpServerResponse.jsonUnsafe(
    { data: null, error: { code, message, requestId } },
    { status }
  )

/** Every /v1 operation's method and path pattern, read from the API definition. */
const operations: ReadonlyArray<{ readonly method: string; readonly pattern: RegExp }> = Object.values(Api.groups).flatMap((group) =>
  Object.values(group.endpoints).map((endpoint) => ({
    method: endpoint.method,
    pattern: new RegExp(`^${endpoint.path.replace(/:[^/]+/g, "[^/]+")}$`)
  }))
)

/** The methods the API answers on `path` (HEAD with GET), in a stable order. */
const allowedMethods = (path: string): ReadonlyArray<string> => {
  const methods = new Set(operations.filter((o) => o.pattern.test(path)).map((o) => o.method))
  if (methods.has("GET")) methods.add("HEAD")
  return ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"].filter((m) => methods.has(m))
}

/** Fits a response made outside the API handlers (router misses, framework refusals) into the envelope. */
const ensureEnvelope = (response: Response, requestId: string, method: string, path: string): Response => {
  if (response.status < 400) return response
  const type = response.headers["content-type"] ?? ""
  // JSON errors (the envelope, or RFC 6749 errors of the OAuth endpoints) and HTML error pages are already complete.
  if ((type.startsWith("application/json") || type.startsWith("text/html")) && response.body._tag === "Uint8Array") {
    return response
  }
  switch (response.status) {
    case 404: {
      // A path the API serves with other methods: 405 naming them (RFC 9110 §15.5.6), not "no such route".
      const allowed = allowedMethods(path)
      return allowed.length === 0
        ? envelope(404, requestId, `No route for ${method} ${path}`)
        : HttpServerResponse.setHeader(envelope(405, requestId, `${method} is not allowed on ${path}; use ${allowed.join(", ")}`), "allow", allowed.join(", "))
    }
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
 * Wraps every request: assigns the request id, caps what any body reader
 * takes at MAX_BODY_BYTES (reading nothing itself), fits anything that did not come from an API handler (router
 * misses, framework refusals, defects) into the envelope, stamps
 * `X-Request-Id`, and writes one log line with the request id, credential id,
 * status and duration (never a header or body, so never a token). With
 * metrics on, it counts the request under its route template, method and
 * status (never its raw path), times it and keeps the in-flight gauge.
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
    const facts: { credentialId?: string; organizationId?: string; actorOrganizationId?: string } = {}
    let status = 0
    const finish = (response: Response) => {
      const final = HttpServerResponse.setHeader(ensureEnvelope(response, requestId, request.method, path), "x-request-id", requestId)
      status = final.status
      return final
    }
    const metered = yield* RequestMetrics
    let route: string | undefined
    if (metered) yield* requestsInFlight(1)
    const writeLog = Effect.gen(function*() {
      const durationMs = Number((yield* Clock.currentTimeNanos) - started) / 1e6
      if (metered) {
        yield* requestsInFlight(-1)
        yield* requestAnswered(route ?? UNMATCHED_ROUTE, request.method, status, durationMs / 1000)
      }
      yield* Effect.logInfo("request").pipe(Effect.annotateLogs({
        requestId,
        method: request.method,
        path,
        status,
        durationMs: Math.round(durationMs * 100) / 100,
        credentialId: facts.credentialId ?? null,
        organizationId: facts.organizationId ?? null,
        ...(facts.actorOrganizationId === undefined ? {} : { actorOrganizationId: facts.actorOrganizationId })
      }))
    })
    yield* HttpEffect.appendPreResponseHandler((_request, response) => Effect.succeed(finish(response)))
    // Nothing here reads the body: the route and the credential come first (api/requestBody.ts).
    return yield* app.pipe(
      // The router leaves the matched route in the context it ran the handler in: its template labels the metrics.
      metered ? Effect.onExit(() => Effect.map(matchedRoute, (matched) => void (route = matched))) : identity,
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
