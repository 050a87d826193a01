import { ByteSize, Context, Effect, Layer } from "effect"
import { HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiMiddleware } from "effect/http-api"
import { Limits } from "@opsplatform/core"
import { apiError, BadRequestError, defaultCode } from "./errors.ts"
import { CurrentRequestId } from "./requestContext.ts"
import type { Annotatable } from "./security.ts"

/**
 * The request body of a /v1 operation, read only once the route is known and
 * the credential has been checked (this middleware runs inside
 * `Authentication`, which has checked the operation's scope): a body without
 * a media type is 415; a body declared larger than the operation's limit is
 * 413 without reading a byte of it; a JSON body is read within 1 MiB
 * (`Limits.MAX_BODY_BYTES`) and checked in one pass for what no column can
 * store and for nesting deeper than `Limits.MAX_JSON_DEPTH`. Everything after
 * it (idempotency fingerprints, payload decoding) reads the same buffered
 * text. Decided: docs/decisions.md, "Limits and ranges (hardening)".
 */
export class RequestBody extends HttpApiMiddleware.Service<RequestBody>()("@opsplatform/http-node/RequestBody", {
  error: BadRequestError
}) {}

/** An operation that takes a file: the largest body it reads, and the media types it reads as the file (others get the API's limit). */
export class UploadBody extends Context.Service<UploadBody, {
  readonly maxBytes: number
  readonly mediaTypes: ReadonlyArray<string>
}>()("@opsplatform/http-node/UploadBody") {}

/** Declares an operation's upload: its size, for its media types only (the import endpoint). */
export const upload = (options: UploadBody["Service"]) => <E extends Annotatable>(endpoint: E): E =>
  endpoint.annotate(UploadBody, options) as E

/** The media type of a Content-Type header, without parameters, in lower case; "" when there is none. */
export const mediaTypeOf = (header: string | undefined): string => (header ?? "").split(";")[0]!.trim().toLowerCase()

const methodWithBody = (method: string) => method !== "GET" && method !== "HEAD" && method !== "OPTIONS"

/** The largest body of a request of `mediaType` to an operation taking `upload` (or no upload): 1 MiB unless the upload's media type. */
export const bodyLimitOf = (upload: UploadBody["Service"] | undefined, mediaType: string): number =>
  upload !== undefined && upload.mediaTypes.includes(mediaType) ? upload.maxBytes : Limits.MAX_BODY_BYTES

export interface BodyIssue {
  readonly field: string
  readonly issue: string
}

const depthIssue = `must not nest arrays and objects more than ${Limits.MAX_JSON_DEPTH} levels deep`
const nulIssue = "must not contain the NUL character (\\u0000)"
const surrogateIssue = "must not contain a lone UTF-16 surrogate (half of a surrogate pair)"

const hex = (c: number) =>
  c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1

/** The UTF-16 unit a `\uXXXX` escape at `i` (the backslash) stands for, or -1 when it is not one. */
const escapedUnit = (text: string, i: number): number => {
  if (text.charCodeAt(i + 1) !== 0x75 || i + 5 >= text.length) return -1
  let unit = 0
  for (let k = 2; k < 6; k++) {
    const d = hex(text.charCodeAt(i + k))
    if (d < 0) return -1
    unit = unit * 16 + d
  }
  return unit
}

interface Frame {
  readonly array: boolean
  /** Arrays: the index of the current element. */
  index: number
  /** Objects: where the current key's JSON string starts and ends in the text (quotes included); -1 before the first. */
  keyStart: number
  keyEnd: number
  /** Objects: the next string is a key. */
  expectKey: boolean
}

const fieldOf = (text: string, stack: ReadonlyArray<Frame>): string => {
  const parts: Array<string> = []
  for (const frame of stack) {
    if (frame.array) parts.push(String(frame.index))
    else if (frame.keyStart >= 0) parts.push(JSON.parse(text.slice(frame.keyStart, frame.keyEnd)) as string)
  }
  return parts.length === 0 ? "body" : parts.join(".")
}

/**
 * What a JSON text holds that the API refuses before decoding it, found in
 * one pass over the text with an explicit stack (no recursion, no pattern per
 * string): nesting deeper than `maxDepth`, a NUL character or a lone UTF-16
 * surrogate (PostgreSQL stores neither) in any string or key, named by its
 * dotted path (`couriers.0.name`; `body` for the whole). A text that is not
 * JSON is left to the JSON parser to report, except for its depth.
 */
export const jsonBodyIssue = (text: string, maxDepth: number = Limits.MAX_JSON_DEPTH): BodyIssue | undefined => {
  const stack: Array<Frame> = []
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      const top = stack[stack.length - 1]
      const isKey = top !== undefined && !top.array && top.expectKey
      const start = i
      let nul = false
      let lone = false
      let pendingHigh = false
      for (i++; i < text.length; i++) {
        let unit = text.charCodeAt(i)
        if (unit === 0x22) break
        if (unit === 0x5c) {
          unit = escapedUnit(text, i)
          i += unit < 0 ? 1 : 5
          if (unit < 0) {
            lone ||= pendingHigh
            pendingHigh = false
            continue
          }
        }
        if (unit === 0) nul = true
        if (unit >= 0xdc00 && unit <= 0xdfff) {
          lone ||= !pendingHigh
          pendingHigh = false
        } else {
          lone ||= pendingHigh
          pendingHigh = unit >= 0xd800 && unit <= 0xdbff
        }
      }
      lone ||= pendingHigh
      // A string with both is reported for its NUL.
      const issue = nul ? nulIssue : lone ? surrogateIssue : undefined
      if (isKey) {
        top.keyStart = start
        top.keyEnd = i + 1
        top.expectKey = false
      }
      if (issue !== undefined) {
        // Valid JSON only: a text the parser refuses is answered `invalid_json`, whatever it holds.
        try {
          JSON.parse(text)
        } catch {
          return undefined
        }
        return { field: fieldOf(text, stack), issue }
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (stack.length >= maxDepth) return { field: "body", issue: depthIssue }
      stack.push({ array: c === 0x5b, index: 0, keyStart: -1, keyEnd: -1, expectKey: c === 0x7b })
    } else if (c === 0x5d || c === 0x7d) {
      stack.pop()
    } else if (c === 0x2c) {
      const top = stack[stack.length - 1]
      if (top?.array === true) top.index++
      else if (top !== undefined) top.expectKey = true
    }
  }
  return undefined
}

/** A refusal made here, in the envelope (413 and 415 are not errors every operation declares). */
const refusal = (status: 413 | 415, message: string) =>
  Effect.map(CurrentRequestId, (requestId) =>
    HttpServerResponse.jsonUnsafe({ data: null, error: { code: defaultCode(status), message, requestId } }, { status }))

const tooLarge = (limit: number) => refusal(413, `The request body exceeds ${limit} bytes`)

export const RequestBodyLive: Layer.Layer<RequestBody> = Layer.succeed(
  RequestBody,
  RequestBody.of((httpEffect, { endpoint }) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (!methodWithBody(request.method)) return yield* httpEffect
      const type = mediaTypeOf(request.headers["content-type"])
      const declared = Number(request.headers["content-length"] ?? "0")
      const hasBody = declared > 0 || request.headers["transfer-encoding"] !== undefined
      if (!hasBody) return yield* httpEffect
      if (type === "") return yield* refusal(415, "The request has a body but no Content-Type: send application/json")
      const limit = bodyLimitOf(Context.getOrUndefined(endpoint.annotations, UploadBody), type)
      if (declared > limit) return yield* tooLarge(limit)
      const within = Effect.provideService(httpEffect, HttpIncomingMessage.MaxBodySize, ByteSize.bytes(limit))
      // An operation that declares no payload never parses its body, so it is not checked (an idempotency fingerprint hashes it within the limit).
      if (type !== "application/json" || endpoint.payload.size === 0) return yield* within
      const text = yield* Effect.provideService(request.text, HttpIncomingMessage.MaxBodySize, ByteSize.bytes(limit)).pipe(Effect.result)
      if (text._tag === "Failure") {
        const reason = text.failure.reason
        return yield* reason._tag === "RequestParseError" && reason.reason === "BodyTooLarge"
          ? tooLarge(limit)
          : Effect.flatMap(apiError(400, "invalid_json", "The request body could not be read"), Effect.fail)
      }
      const found = jsonBodyIssue(text.success)
      if (found !== undefined) {
        return yield* Effect.flatMap(
          apiError(400, "validation_failed", `Invalid ${found.field}: ${found.issue}`, { details: [found] }),
          Effect.fail
        )
      }
      return yield* within
    }))
)
