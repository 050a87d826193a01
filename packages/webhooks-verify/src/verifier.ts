import { fail } from "./errors.ts"
import type { WebhookEvent } from "./events.ts"
import {
  describeSignatures,
  ed25519Signatures,
  type HeadersLike,
  parseTimestamp,
  readSignedHeaders,
  signatureMatches,
  signatureOffsets,
  type WebhookHeaders
} from "./headers.ts"
import { encodeBase64 } from "./base64.ts"
import { envelopeOf, messageOf, parseJson, type WebhookPayload } from "./payload.ts"
import {
  decodeSecret,
  decodeSigningKeys,
  decodeVerifyingKeys,
  formatKeyPair,
  formatSecret,
  type WebhookSecret
} from "./secret.ts"

/**
 * What verification needs from the runtime: HMAC-SHA256, Ed25519, random
 * bytes and UTF-8 decoding. `Key`, `PublicKey` and `PrivateKey` are whatever
 * the runtime prepares once per key (the key bytes, precomputed pad states,
 * a `KeyObject`, a `CryptoKey`), so each verification only does the work of
 * the message.
 */
export interface Runtime<Key, PublicKey = unknown, PrivateKey = unknown> {
  importKey(raw: Uint8Array): Key
  /** The padded base64 of the HMAC-SHA256 of `prefix` (as UTF-8) followed by `message`. */
  hmac(key: Key, prefix: string, message: string | Uint8Array): string
  hmacAsync(key: Key, prefix: string, message: string | Uint8Array): Promise<string>
  /** An Ed25519 public key from its 32 bytes. */
  importPublicKey(raw: Uint8Array): PublicKey
  /**
   * Whether `signature` is the Ed25519 signature of `prefix` (as UTF-8)
   * followed by `message`; absent where the runtime has no synchronous Ed25519.
   */
  verifyEd25519?(key: PublicKey, prefix: string, message: string | Uint8Array, signature: Uint8Array): boolean
  verifyEd25519Async(key: PublicKey, prefix: string, message: string | Uint8Array, signature: Uint8Array): Promise<boolean>
  /** An Ed25519 private key from its seed, with the public key it must match. */
  importPrivateKey(seed: Uint8Array, publicKey: Uint8Array): PrivateKey
  /** Absent where the runtime has no synchronous Ed25519. */
  signEd25519?(key: PrivateKey, prefix: string, message: string | Uint8Array): Uint8Array
  signEd25519Async(key: PrivateKey, prefix: string, message: string | Uint8Array): Promise<Uint8Array>
  generateEd25519(): Promise<{ readonly seed: Uint8Array; readonly publicKey: Uint8Array }>
  randomBytes(size: number): Uint8Array
  /** UTF-8 with invalid sequences replaced by U+FFFD and a leading byte order mark dropped, as `Response.json()` reads a body. */
  decodeUtf8(bytes: Uint8Array): string
}

const noSyncEd25519 = (what: string): never => {
  throw new TypeError(
    `${what} is synchronous, and this runtime has no synchronous Ed25519 (v1a): use the async form ` +
      "(verifyAsync, verifySignatureAsync, verifyRequest, signAsync), or the node:crypto entry on Node, Deno and Bun."
  )
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
   * `node:crypto` on Node, Deno and Bun; plain JavaScript elsewhere, for
   * `v1` only (a verifier holding a `whpk_` key throws a `TypeError` there:
   * use `verifyAsync`).
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
  /** Where each candidate v1 signature starts in `header` (none when the verifier holds no secret). */
  readonly offsets: ReadonlyArray<number>
  /** The candidate v1a signatures (none when the verifier holds no public key). */
  readonly ed25519: ReadonlyArray<Uint8Array>
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

const noMatch = (pending: Pending, secrets: number, publicKeys: number): never => {
  const hint = typeof pending.message === "string" && pending.message.startsWith("[object ")
    ? ` The payload is the string ${JSON.stringify(pending.message.slice(0, 20))}: an object was converted to a string; pass the raw body.`
    : " Check that the payload is the raw request body byte for byte (parsing and re-serializing JSON changes it) " +
      `and that the ${publicKeys === 0 ? "secret is this endpoint's signing secret" : secrets === 0 ? "public key is this endpoint's (after a rotation, fetch GET /v1/webhooks/{id}/public-keys again)" : "keys are this endpoint's"}.`
  const checked = [
    ...(secrets > 0 ? [`${plural(pending.offsets.length, "v1 entry", "v1 entries")} checked against ${plural(secrets, "secret", "secrets")}`] : []),
    ...(publicKeys > 0
      ? [`${plural(pending.ed25519.length, "v1a entry", "v1a entries")} checked against ${plural(publicKeys, "public key", "public keys")}`]
      : [])
  ]
  return fail("no_matching_signature", `No signature in webhook-signature matches the payload (${checked.join("; ")}).${hint}`)
}

/** A verifier bound to one runtime's crypto. */
export const makeVerifier = <Key, PublicKey>(
  runtime: Runtime<Key, PublicKey>,
  secrets: WebhookSecret | ReadonlyArray<WebhookSecret>,
  options: VerifierOptions = {}
): WebhookVerifier & { readonly signed: (payload: unknown, headers: unknown) => Signed } => {
  const decoded = decodeVerifyingKeys(secrets)
  // Keys are imported once, here: a KeyObject or CryptoKey is not made again per delivery.
  const keys: Array<Key> = []
  const publicKeys: Array<PublicKey> = []
  for (const key of decoded) {
    if (key.kind === "secret") keys.push(runtime.importKey(key.raw))
    else publicKeys.push(runtime.importPublicKey(key.raw))
  }
  const checks = { v1: keys.length > 0, v1a: publicKeys.length > 0 }
  const tolerance = toleranceOf(options.toleranceSeconds)
  const now = clockOf(options.now)

  const pending = (payload: unknown, headers: unknown): Pending => {
    const message = messageOf(payload)
    const signed = readSignedHeaders(headers)
    const timestamp = parseTimestamp(signed.timestamp)
    checkTolerance(timestamp, secondsOf(now), tolerance)
    const header = signed.signature
    const offsets = checks.v1 ? signatureOffsets(header) : []
    const ed25519 = checks.v1a ? ed25519Signatures(header) : []
    if (offsets.length === 0 && ed25519.length === 0) {
      fail("no_matching_signature", `The webhook-signature header has no usable signature: ${describeSignatures(header, checks)}.`)
    }
    return { id: signed.id, timestamp, message, header, offsets, ed25519, prefix: `${signed.id}.${signed.timestamp}.` }
  }

  const matches = (expected: string, p: Pending): boolean => {
    for (let i = 0; i < p.offsets.length; i++) {
      if (signatureMatches(p.header, p.offsets[i]!, expected)) return true
    }
    return false
  }

  const signed = (payload: unknown, headers: unknown): Signed => {
    if (checks.v1a && runtime.verifyEd25519 === undefined) noSyncEd25519("verify")
    const p = pending(payload, headers)
    if (p.offsets.length > 0) {
      for (let i = 0; i < keys.length; i++) {
        if (matches(runtime.hmac(keys[i]!, p.prefix, p.message), p)) return p
      }
    }
    for (let s = 0; s < p.ed25519.length; s++) {
      for (let k = 0; k < publicKeys.length; k++) {
        if (runtime.verifyEd25519!(publicKeys[k]!, p.prefix, p.message, p.ed25519[s]!)) return p
      }
    }
    return noMatch(p, keys.length, publicKeys.length)
  }

  const signedAsync = async (payload: unknown, headers: unknown): Promise<Signed> => {
    const p = pending(payload, headers)
    if (p.offsets.length > 0) {
      for (const key of keys) {
        if (matches(await runtime.hmacAsync(key, p.prefix, p.message), p)) return p
      }
    }
    for (const signature of p.ed25519) {
      for (const key of publicKeys) {
        if (await runtime.verifyEd25519Async(key, p.prefix, p.message, signature)) return p
      }
    }
    return noMatch(p, keys.length, publicKeys.length)
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

interface Signing {
  readonly id: string
  readonly timestamp: string
  readonly prefix: string
  readonly message: string | Uint8Array
}

const signingOf = (input: SignInput): Signing => {
  if (typeof input?.id !== "string" || input.id.length === 0) throw new TypeError("id must be a non-empty string")
  const timestamp = String(timestampOf(input.timestamp))
  return { id: input.id, timestamp, prefix: `${input.id}.${timestamp}.`, message: messageOf(input.payload) }
}

const headersOf = (s: Signing, entries: ReadonlyArray<string>): SignedHeaders => ({
  "webhook-id": s.id,
  "webhook-timestamp": s.timestamp,
  "webhook-signature": entries.join(" ")
})

/**
 * One entry per key, in the order given, as the platform signs during a
 * rotation: `v1,<base64>` for a `whsec_` secret, `v1a,<base64>` for a
 * `whsk_` private key.
 */
export const signWith = <Key, PublicKey, PrivateKey>(
  runtime: Runtime<Key, PublicKey, PrivateKey>,
  secrets: WebhookSecret | ReadonlyArray<WebhookSecret>,
  input: SignInput
): SignedHeaders => {
  const keys = decodeSigningKeys(secrets)
  const s = signingOf(input)
  return headersOf(
    s,
    keys.map((key) => {
      if (key.kind === "secret") return `v1,${runtime.hmac(runtime.importKey(key.raw), s.prefix, s.message)}`
      if (runtime.signEd25519 === undefined) noSyncEd25519("sign")
      return `v1a,${encodeBase64(runtime.signEd25519!(runtime.importPrivateKey(key.seed, key.publicKey), s.prefix, s.message))}`
    })
  )
}

export const signAsyncWith = async <Key, PublicKey, PrivateKey>(
  runtime: Runtime<Key, PublicKey, PrivateKey>,
  secrets: WebhookSecret | ReadonlyArray<WebhookSecret>,
  input: SignInput
): Promise<SignedHeaders> => {
  const keys = decodeSigningKeys(secrets)
  const s = signingOf(input)
  const entries: Array<string> = []
  for (const key of keys) {
    entries.push(
      key.kind === "secret"
        ? `v1,${await runtime.hmacAsync(runtime.importKey(key.raw), s.prefix, s.message)}`
        : `v1a,${encodeBase64(await runtime.signEd25519Async(runtime.importPrivateKey(key.seed, key.publicKey), s.prefix, s.message))}`
    )
  }
  return headersOf(s, entries)
}

export const secretBytes = 32

export const generateSecretWith = <Key>(runtime: Runtime<Key>): string => formatSecret(runtime.randomBytes(secretBytes))

/** A `v1a` key pair as the platform formats one: for testing handlers that verify with a public key. */
export interface WebhookKeyPair {
  /** `whsk_` + base64 of the 32-byte seed and the 32-byte public key. */
  readonly privateKey: string
  /** `whpk_` + base64 of the 32-byte public key. */
  readonly publicKey: string
}

export const generateKeyPairWith = async <Key>(runtime: Runtime<Key>): Promise<WebhookKeyPair> => {
  const { publicKey, seed } = await runtime.generateEd25519()
  return formatKeyPair(seed, publicKey)
}

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
 * verification. Each entry point binds it to its runtime's crypto. Besides a
 * `whsec_` secret it takes a `whpk_` public key, which verifies `v1a`
 * deliveries and cannot sign.
 */
export class WebhookWith {
  readonly #runtime: Runtime<unknown>
  readonly #key: Uint8Array | string
  readonly #verifier: ReturnType<typeof makeVerifier<unknown, unknown>>

  constructor(runtime: Runtime<unknown>, secret: WebhookSecret, options?: WebhookOptions) {
    this.#runtime = runtime
    if (options?.format === "raw") {
      this.#key = rawKey(secret)
    } else {
      const [key] = decodeVerifyingKeys(secret)
      this.#key = key!.kind === "public" ? secret as string : decodeSecret(secret)
    }
    this.#verifier = makeVerifier(runtime, this.#key, options)
  }

  /** Returns the parsed JSON body (undefined for an empty body); throws `WebhookVerificationError`. */
  verify(payload: WebhookPayload, headers: WebhookHeaders, options?: WebhookVerifyOptions): unknown {
    const { message } = this.#verifier.signed(payload, headers)
    if (options?.jsonParse === false) return undefined
    const text = textOf(this.#runtime, message)
    return text === "" ? undefined : parseJson(text)
  }

  /** The `webhook-signature` value for this message: `v1,<base64>`. A public key cannot sign (`wrong_key_kind`). */
  sign(msgId: string, timestamp: Date, payload: WebhookPayload): string {
    return signWith(this.#runtime, this.#key, { id: msgId, timestamp, payload })["webhook-signature"]
  }
}

/** The functions of an entry point, bound to its runtime's crypto. */
export interface WebhooksApi {
  /**
   * A verifier for `whsec_` secrets (`v1`) and `whpk_` public keys (`v1a`):
   * one, or several while keys rotate.
   */
  readonly createVerifier: (secrets: WebhookSecret | ReadonlyArray<WebhookSecret>, options?: VerifierOptions) => WebhookVerifier
  /**
   * Signs a payload as the platform does, one entry per key (`v1` for a
   * `whsec_` secret, `v1a` for a `whsk_` private key): for testing handlers.
   * `v1a` needs `node:crypto`; elsewhere use `signAsync`.
   */
  readonly sign: (secrets: WebhookSecret | ReadonlyArray<WebhookSecret>, input: SignInput) => SignedHeaders
  /** `sign`, on Web Crypto where the runtime has no `node:crypto`. */
  readonly signAsync: (secrets: WebhookSecret | ReadonlyArray<WebhookSecret>, input: SignInput) => Promise<SignedHeaders>
  /** A new signing secret: `whsec_` and the base64 of 32 random bytes. */
  readonly generateSecret: () => string
  /** A new `v1a` key pair (`whsk_…`, `whpk_…`), for testing handlers. */
  readonly generateKeyPair: () => Promise<WebhookKeyPair>
}

export const bindApi = <Key, PublicKey, PrivateKey>(runtime: Runtime<Key, PublicKey, PrivateKey>): WebhooksApi => ({
  createVerifier: (secrets, options) => makeVerifier(runtime, secrets, options),
  sign: (secrets, input) => signWith(runtime, secrets, input),
  signAsync: (secrets, input) => signAsyncWith(runtime, secrets, input),
  generateSecret: () => generateSecretWith(runtime as Runtime<Key>),
  generateKeyPair: () => generateKeyPairWith(runtime as Runtime<Key>)
})
