import { fail } from "./errors.ts"
import type { WebhookEvent } from "./events.ts"
import {
  describeSignatures,
  type HeadersLike,
  parseTimestamp,
  readSignedHeaders,
  signatureMatches,
  signatureOffsets,
  type WebhookHeaders
} from "./headers.ts"
import { envelopeOf, messageOf, parseJson, type WebhookPayload } from "./payload.ts"
import { decodeSecret, decodeSecrets, formatSecret, type WebhookSecret } from "./secret.ts"

/**
 * What verification needs from the runtime: HMAC-SHA256, random bytes and
 * UTF-8 decoding. `Key` is whatever the runtime prepares once per secret
 * (the key bytes, precomputed pad states, a `CryptoKey`), so each
 * verification only hashes the message.
 */
export interface Runtime<Key> {
  importKey(raw: Uint8Array): Key
  /** The padded base64 of the HMAC-SHA256 of `prefix` (as UTF-8) followed by `message`. */
  hmac(key: Key, prefix: string, message: string | Uint8Array): string
  hmacAsync(key: Key, prefix: string, message: string | Uint8Array): Promise<string>
  randomBytes(size: number): Uint8Array
  /** UTF-8 with invalid sequences replaced by U+FFFD and a leading byte order mark dropped, as `Response.json()` reads a body. */
  decodeUtf8(bytes: Uint8Array): string
}

export interface VerifierOptions {
  /**
   * The largest accepted difference, in seconds, between `webhook-timestamp`
   * and the receiver's clock, either way. Default 300: a difference of
   * exactly 300 s passes, 301 s fails.
   */
  readonly toleranceSeconds?: number
  /** The receiver's clock: a `Date`, or milliseconds since the epoch like `Date.now` (the default). */
  readonly now?: () => Date | number
}

/** What a verified delivery's headers say. */
export interface VerifiedSignature {
  /** The `webhook-id` header: the event id. Dedupe on it. */
  readonly id: string
  /** The `webhook-timestamp` header: when the delivery was signed, in Unix seconds. */
  readonly timestamp: number
}

export interface VerifiedWebhook<Event = WebhookEvent> extends VerifiedSignature {
  /** The parsed body: the event envelope, discriminated on `type`. */
  readonly event: Event
}

/** A Fetch `Request` (or anything with its `headers`, `bodyUsed` and `arrayBuffer()`). */
export interface RequestLike {
  readonly headers: HeadersLike
  readonly bodyUsed?: boolean
  arrayBuffer(): Promise<ArrayBuffer>
}

export interface WebhookVerifier {
  /**
   * Checks the signature and the timestamp, parses the body and checks it is
   * an event envelope whose `id` is the `webhook-id`. Synchronous: native
   * `node:crypto` on Node, Deno and Bun; plain JavaScript elsewhere.
   */
  verify(payload: WebhookPayload, headers: WebhookHeaders): VerifiedWebhook
  /** `verify` on Web Crypto where the runtime has no `node:crypto`. */
  verifyAsync(payload: WebhookPayload, headers: WebhookHeaders): Promise<VerifiedWebhook>
  /** Checks the signature and the timestamp only, leaving the body unparsed. */
  verifySignature(payload: WebhookPayload, headers: WebhookHeaders): VerifiedSignature
  verifySignatureAsync(payload: WebhookPayload, headers: WebhookHeaders): Promise<VerifiedSignature>
  /** Reads a Fetch `Request`'s raw body and headers, then `verifyAsync`. Call it before anything else reads the body. */
  verifyRequest(request: RequestLike): Promise<VerifiedWebhook>
}

/** A delivery whose signature and timestamp were checked, with its message still raw. */
interface Signed extends VerifiedSignature {
  readonly message: string | Uint8Array
}

/** A delivery whose headers and timestamp passed, before any hashing. */
interface Pending extends Signed {
  readonly prefix: string
  readonly header: string
  /** Where each candidate v1 signature starts in `header`. */
  readonly offsets: ReadonlyArray<number>
}

export const defaultToleranceSeconds = 300

const toleranceOf = (value: number | undefined): number => {
  if (value === undefined) return defaultToleranceSeconds
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new RangeError(`toleranceSeconds must be a finite number of seconds, 0 or more; got ${String(value)}`)
  }
  return value
}

const clockOf = (now: VerifierOptions["now"]): () => Date | number => {
  if (now === undefined) return Date.now
  if (typeof now !== "function") throw new TypeError("now must be a function returning a Date or milliseconds")
  return now
}

const secondsOf = (now: () => Date | number): number => {
  const value = now()
  const ms = typeof value === "number" ? value : value instanceof Date ? value.getTime() : Number.NaN
  if (!Number.isFinite(ms)) throw new TypeError(`now() must return a valid Date or milliseconds, got ${String(value)}`)
  return Math.floor(ms / 1000)
}

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`

const checkTolerance = (timestamp: number, nowSeconds: number, tolerance: number): void => {
  const age = nowSeconds - timestamp
  if (Math.abs(age) <= tolerance) return
  const clockHint = nowSeconds < 100_000_000
    ? ` The receiver's clock reads ${nowSeconds} s after 1970: if the now option returns seconds, return milliseconds or a Date.`
    : " If every delivery fails this way, check the receiver's clock."
  if (age > 0) {
    fail(
      "timestamp_too_old",
      `The webhook-timestamp ${timestamp} is ${age} s behind the receiver's clock (${nowSeconds}), more than the tolerance of ${tolerance} s: ` +
        `the delivery is stale or replayed.${clockHint}`
    )
  }
  fail(
    "timestamp_too_new",
    `The webhook-timestamp ${timestamp} is ${-age} s ahead of the receiver's clock (${nowSeconds}), more than the tolerance of ${tolerance} s.${clockHint}`
  )
}

const textOf = <Key>(runtime: Runtime<Key>, message: string | Uint8Array): string =>
  typeof message === "string" ? message : runtime.decodeUtf8(message)

const noMatch = (pending: Pending, secrets: number): never => {
  const hint = typeof pending.message === "string" && pending.message.startsWith("[object ")
    ? ` The payload is the string ${JSON.stringify(pending.message.slice(0, 20))}: an object was converted to a string; pass the raw body.`
    : " Check that the payload is the raw request body byte for byte (parsing and re-serializing JSON changes it) " +
      "and that the secret is this endpoint's signing secret."
  return fail(
    "no_matching_signature",
    `No signature in webhook-signature matches the payload (${plural(pending.offsets.length, "v1 entry", "v1 entries")} ` +
      `checked against ${plural(secrets, "secret", "secrets")}).${hint}`
  )
}

/** A verifier bound to one runtime's crypto. */
export const makeVerifier = <Key>(
  runtime: Runtime<Key>,
  secrets: WebhookSecret | ReadonlyArray<WebhookSecret>,
  options: VerifierOptions = {}
): WebhookVerifier & { readonly signed: (payload: unknown, headers: unknown) => Signed } => {
  const keys = decodeSecrets(secrets).map((raw) => runtime.importKey(raw))
  const tolerance = toleranceOf(options.toleranceSeconds)
  const now = clockOf(options.now)

  const pending = (payload: unknown, headers: unknown): Pending => {
    const message = messageOf(payload)
    const signed = readSignedHeaders(headers)
    const timestamp = parseTimestamp(signed.timestamp)
    checkTolerance(timestamp, secondsOf(now), tolerance)
    const header = signed.signature
    const offsets = signatureOffsets(header)
    if (offsets.length === 0) {
      fail("no_matching_signature", `The webhook-signature header has no usable signature: ${describeSignatures(header)}.`)
    }
    return { id: signed.id, timestamp, message, header, offsets, prefix: `${signed.id}.${signed.timestamp}.` }
  }

  const matches = (expected: string, p: Pending): boolean => {
    for (let i = 0; i < p.offsets.length; i++) {
      if (signatureMatches(p.header, p.offsets[i]!, expected)) return true
    }
    return false
  }

  const signed = (payload: unknown, headers: unknown): Signed => {
    const p = pending(payload, headers)
    for (let i = 0; i < keys.length; i++) {
      if (matches(runtime.hmac(keys[i]!, p.prefix, p.message), p)) return p
    }
    return noMatch(p, keys.length)
  }

  const signedAsync = async (payload: unknown, headers: unknown): Promise<Signed> => {
    const p = pending(payload, headers)
    for (const key of keys) {
      if (matches(await runtime.hmacAsync(key, p.prefix, p.message), p)) return p
    }
    return noMatch(p, keys.length)
  }

  const withEvent = (s: Signed): VerifiedWebhook => ({
    id: s.id,
    timestamp: s.timestamp,
    event: envelopeOf(parseJson(textOf(runtime, s.message)), s.id)
  })

  const verifyAsync = async (payload: WebhookPayload, headers: WebhookHeaders) => withEvent(await signedAsync(payload, headers))

  return {
    signed,
    verify: (payload, headers) => withEvent(signed(payload, headers)),
    verifyAsync,
    verifySignature: (payload, headers) => {
      const s = signed(payload, headers)
      return { id: s.id, timestamp: s.timestamp }
    },
    verifySignatureAsync: async (payload, headers) => {
      const s = await signedAsync(payload, headers)
      return { id: s.id, timestamp: s.timestamp }
    },
    verifyRequest: async (request) => {
      if (typeof request !== "object" || request === null || typeof request.arrayBuffer !== "function") {
        fail("invalid_payload", "verifyRequest takes a Fetch Request; for a body and headers you already hold, use verify or verifyAsync.")
      }
      if (request.bodyUsed === true) {
        fail(
          "payload_already_parsed",
          "The request body was already read (request.json() or request.text()); verify the request before reading it, or verify request.clone()."
        )
      }
      return verifyAsync(await request.arrayBuffer(), request.headers)
    }
  }
}

/** The three headers of a signed delivery (a type, not an interface, so it passes as any headers record). */
export type SignedHeaders = {
  readonly "webhook-id": string
  readonly "webhook-timestamp": string
  readonly "webhook-signature": string
}

export interface SignInput {
  /** The event id (`evt_…`); the envelope's `id` must be the same. */
  readonly id: string
  /** The exact body to send. */
  readonly payload: WebhookPayload
  /** Signing time: a `Date` or Unix seconds; default now. */
  readonly timestamp?: Date | number
}

const timestampOf = (timestamp: Date | number | undefined): number => {
  if (timestamp === undefined) return Math.floor(Date.now() / 1000)
  if (timestamp instanceof Date) {
    const ms = timestamp.getTime()
    if (!Number.isFinite(ms)) throw new RangeError("timestamp is an invalid Date")
    return Math.floor(ms / 1000)
  }
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new RangeError(`timestamp must be a Date or whole Unix seconds, got ${String(timestamp)}`)
  }
  if (timestamp >= 100_000_000_000) {
    throw new RangeError(`timestamp ${timestamp} looks like milliseconds; pass Unix seconds or a Date`)
  }
  return timestamp
}

/** One `v1,<base64>` entry per secret, as the platform signs during rotation. */
export const signWith = <Key>(
  runtime: Runtime<Key>,
  secrets: WebhookSecret | ReadonlyArray<WebhookSecret>,
  input: SignInput
): SignedHeaders => {
  if (typeof input?.id !== "string" || input.id.length === 0) throw new TypeError("id must be a non-empty string")
  const keys = decodeSecrets(secrets).map((raw) => runtime.importKey(raw))
  const message = messageOf(input.payload)
  const timestamp = String(timestampOf(input.timestamp))
  const prefix = `${input.id}.${timestamp}.`
  return {
    "webhook-id": input.id,
    "webhook-timestamp": timestamp,
    "webhook-signature": keys.map((key) => `v1,${runtime.hmac(key, prefix, message)}`).join(" ")
  }
}

export const secretBytes = 32

export const generateSecretWith = <Key>(runtime: Runtime<Key>): string => formatSecret(runtime.randomBytes(secretBytes))

/** Options of the `Webhook` class: the reference library's, plus the tolerance and the clock. */
export interface WebhookOptions extends VerifierOptions {
  /** `"raw"`: the secret is the key itself (bytes, or a string of byte values), not `whsec_` + base64. */
  readonly format?: "raw"
}

export interface WebhookVerifyOptions {
  /** Default true; false returns undefined instead of the parsed body. */
  readonly jsonParse?: boolean
}

const rawKey = (secret: unknown): Uint8Array => {
  const key = secret instanceof Uint8Array
    ? secret.slice()
    : typeof secret === "string"
    ? Uint8Array.from(secret, (c) => c.charCodeAt(0))
    : fail("invalid_secret", `The secret must be a string or the key bytes, got ${typeof secret}.`)
  if (key.length === 0) fail("invalid_secret", "The secret is empty.")
  return key
}

/**
 * The shape of the `standardwebhooks` library's `Webhook`, on this package's
 * verification. Each entry point binds it to its runtime's crypto.
 */
export class WebhookWith {
  readonly #runtime: Runtime<unknown>
  readonly #key: Uint8Array
  readonly #verifier: ReturnType<typeof makeVerifier<unknown>>

  constructor(runtime: Runtime<unknown>, secret: WebhookSecret, options?: WebhookOptions) {
    this.#runtime = runtime
    this.#key = options?.format === "raw" ? rawKey(secret) : decodeSecret(secret)
    this.#verifier = makeVerifier(runtime, this.#key, options)
  }

  /** Returns the parsed JSON body (undefined for an empty body); throws `WebhookVerificationError`. */
  verify(payload: WebhookPayload, headers: WebhookHeaders, options?: WebhookVerifyOptions): unknown {
    const { message } = this.#verifier.signed(payload, headers)
    if (options?.jsonParse === false) return undefined
    const text = textOf(this.#runtime, message)
    return text === "" ? undefined : parseJson(text)
  }

  /** The `webhook-signature` value for this message: `v1,<base64>`. */
  sign(msgId: string, timestamp: Date, payload: WebhookPayload): string {
    return signWith(this.#runtime, this.#key, { id: msgId, timestamp, payload })["webhook-signature"]
  }
}

/** The functions of an entry point, bound to its runtime's crypto. */
export interface WebhooksApi {
  /** A verifier for one secret, or several while the receiver rotates its own. */
  readonly createVerifier: (secrets: WebhookSecret | ReadonlyArray<WebhookSecret>, options?: VerifierOptions) => WebhookVerifier
  /** Signs a payload as the platform does, one entry per secret: for testing handlers. */
  readonly sign: (secrets: WebhookSecret | ReadonlyArray<WebhookSecret>, input: SignInput) => SignedHeaders
  /** A new signing secret: `whsec_` and the base64 of 32 random bytes. */
  readonly generateSecret: () => string
}

export const bindApi = <Key>(runtime: Runtime<Key>): WebhooksApi => ({
  createVerifier: (secrets, options) => makeVerifier(runtime, secrets, options),
  sign: (secrets, input) => signWith(runtime, secrets, input),
  generateSecret: () => generateSecretWith(runtime)
})
