import { ByteSize, Cause, Clock, Effect } from "effect"
import { SecureRandom } from "effect/crypto"
import { HttpEffect, HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { HttpServerResponse as Response } from "effect/http/HttpServerResponse"
import { Limits, Secrets } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { defaultCode } from "../api/errors.ts"
import { CurrentRequestId, RequestLogFacts } from "../api/requestContext.ts"

/** Largest request body the API reads (docs/decisions.md, "Limits and ranges"). */
export const MAX_BODY_BYTES = Limits.MAX_BODY_BYTES

/** Largest body of an import upload (POST /v1/imports; decided: docs/decisions.md, "Imports"). */
export const MAX_IMPORT_BODY_BYTES = 50 * 1024 * 1024 + 64 * 1024

/** The body limit of a request: the import upload's, or the API's. */
const bodyLimit = (method: string, path: string) =>
  method === "POST" && path === "/v1/imports" ? MAX_IMPORT_BODY_BYTES : MAX_BODY_BYTES


const envelope = (status: number, requestId: string, message: string, code = defaultCode(status)) =>
  HttpServerResponse.jsonUnsafe(
    { data: null, error: { code, message, requestId } },
    { status }
  )

/**
 * What no column can store: PostgreSQL refuses the NUL character in text and
 * jsonb, and a lone UTF-16 surrogate (`"\ud800"`, half of a pair) is not
 * text at all. A JSON body holding either in any string or key is refused up
 * front as the caller's mistake, naming the field, rather than failing in
 * the database (decided: docs/decisions.md, "limits and ranges").
 */
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

export const unstorableString = (value: unknown, path = "body"): { readonly field: string; readonly issue: string } | undefined => {
  const check = (text: string, at: string) =>
    text.includes("\u0000")
      ? { field: at, issue: "must not contain the NUL character (\\u0000)" }
      : loneSurrogate.test(text)
      ? { field: at, issue: "must not contain a lone UTF-16 surrogate (half of a surrogate pair)" }
      : undefined
  if (typeof value === "string") return check(value, path)
  if (typeof value !== "object" || value === null) return undefined
  for (const [key, inner] of Object.entries(value)) {
    const at = path === "body" ? key : `${path}.${key}`
    const found = check(key, at) ?? unstorableString(inner, at)
    if (found !== undefined) return found
  }
  return undefined
}

/**
 * How deep arrays and objects nest in a JSON text, counted without parsing it
 * (brackets inside strings do not count), stopping once past `limit`: a body
 * nested deeper than MAX_JSON_DEPTH is refused before any recursive walk over
 * it could exhaust the stack.
 */
export const jsonDepthExceeds = (text: string, limit: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return false
}

const methodWithBody = (method: string) => method !== "GET" && method !== "HEAD" && method !== "OPTIONS"

const hasBody = (request: HttpServerRequest.HttpServerRequest) =>
  methodWithBody(request.method) &&
  (Number(request.headers["content-length"] ?? "0") > 0 || request.headers["transfer-encoding"] !== undefined)

/**
 * Refusals made before any handler runs, as envelopes: a body without a
 * media type (415, as an unsupported one is: a body is never guessed to be
 * JSON), and a JSON body with a string no column can store (400). Every other
 * body goes through; read errors are the API's to report.
 */
const refuseEarly = (request: HttpServerRequest.HttpServerRequest, requestId: string) => {
  const type = (request.headers["content-type"] ?? "").toLowerCase()
  if (type === "" && hasBody(request)) {
    return Effect.succeed(envelope(415, requestId, "The request has a body but no Content-Type: send application/json"))
  }
  if (!methodWithBody(request.method) || !type.startsWith("application/json")) return Effect.succeed(undefined)
  return request.text.pipe(
    Effect.map((text) => {
      if (jsonDepthExceeds(text, Limits.MAX_JSON_DEPTH)) {
        const issue = `must not nest arrays and objects more than ${Limits.MAX_JSON_DEPTH} levels deep`
        return HttpServerResponse.jsonUnsafe({
          data: null,
          error: { code: "validation_failed", message: `Invalid body: ${issue}`, details: [{ field: "body", issue }], requestId }
        }, { status: 400 })
      }
      let parsed: unknown
      try {
        parsed = JSON.parse(text)
      } catch {
        return undefined
      }
      const found = unstorableString(parsed)
      return found === undefined ? undefined : HttpServerResponse.jsonUnsafe({
        data: null,
        error: { code: "validation_failed", message: `Invalid ${found.field}: ${found.issue}`, details: [found], requestId }
      }, { status: 400 })
    }),
    Effect.orElseSucceed(() => undefined)
  )
}

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
    const facts: { credentialId?: string; organizationId?: string; actorOrganizationId?: string } = {}
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
        organizationId: facts.organizationId ?? null,
        ...(facts.actorOrganizationId === undefined ? {} : { actorOrganizationId: facts.actorOrganizationId })
      }))
    })
    const length = Number(request.headers["content-length"] ?? "0")
    const limit = bodyLimit(request.method, path)
    if (length > limit) {
      const response = finish(envelope(413, requestId, `The request body exceeds ${limit} bytes`))
      yield* writeLog
      return response
    }
    yield* HttpEffect.appendPreResponseHandler((_request, response) => Effect.succeed(finish(response)))
    return yield* Effect.flatMap(
      refuseEarly(request, requestId),
      // An early refusal never reaches the router, so it is finished (request id, envelope) here.
      (refused): Effect.Effect<Response, E, R> => refused === undefined ? app : Effect.succeed(finish(refused))
    ).pipe(

      Effect.provideService(CurrentRequestId, requestId),
      Effect.provideService(RequestLogFacts, facts),
      Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(limit)),
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
