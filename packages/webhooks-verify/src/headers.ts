import { decodeBase64 } from "./base64.ts"
import { fail } from "./errors.ts"

/** A Fetch `Headers` object, or anything with the same `get`. */
export interface HeadersLike {
  get(name: string): string | null
}

/** Node's `req.headers`, a plain object in any letter case (values may be arrays), or a `Headers` instance. */
export type WebhookHeaders =
  | HeadersLike
  | { readonly [name: string]: string | ReadonlyArray<string> | undefined | null }

/** The three signed headers, as received. */
export interface SignedHeaderValues {
  readonly id: string
  readonly timestamp: string
  readonly signature: string
}

const isHeadersLike = (headers: object): headers is HeadersLike =>
  typeof (headers as { get?: unknown }).get === "function"

const lookup = (headers: Readonly<Record<string, unknown>>, name: string): unknown => {
  const exact = headers[name]
  if (exact !== undefined) return exact
  for (const key of Object.keys(headers)) {
    if (key.length === name.length && key.toLowerCase() === name) return headers[key]
  }
  return undefined
}

/**
 * One header's value. A header that arrives on several lines is several
 * signature entries for `webhook-signature`, and must repeat one value for
 * the others.
 */
const valueOf = (raw: unknown, name: string): string | undefined => {
  if (raw === undefined || raw === null) return undefined
  if (typeof raw === "string") return raw
  if (Array.isArray(raw)) {
    const values = raw.filter((v): v is string => typeof v === "string")
    if (values.length === 0) return undefined
    if (name === "webhook-signature") return values.join(" ")
    if (values.some((v) => v !== values[0])) {
      fail("invalid_header", `The ${name} header appears ${values.length} times with different values.`)
    }
    return values[0]
  }
  return fail("invalid_header", `The ${name} header must be a string, got ${typeof raw}.`)
}

const names = ["webhook-id", "webhook-timestamp", "webhook-signature"] as const

const missingHint = (headers: object): string => {
  const keys = isHeadersLike(headers) ? [] : Object.keys(headers).map((k) => k.toLowerCase())
  if (!isHeadersLike(headers) && keys.length === 0) return " The headers object is empty: pass the request's headers (e.g. req.headers)."
  if (keys.some((k) => k.startsWith("svix-")) || (isHeadersLike(headers) && headers.get("svix-id") !== null)) {
    return " The request carries svix-* headers: this receiver expects the Standard Webhooks names (webhook-*)."
  }
  return ""
}

export const readSignedHeaders = (headers: unknown): SignedHeaderValues => {
  if (typeof headers !== "object" || headers === null) {
    return fail("missing_header", "No headers were given: pass the request's headers (e.g. req.headers or request.headers).")
  }
  let id: string | undefined
  let timestamp: string | undefined
  let signature: string | undefined
  if (isHeadersLike(headers)) {
    id = headers.get("webhook-id") ?? undefined
    timestamp = headers.get("webhook-timestamp") ?? undefined
    signature = headers.get("webhook-signature") ?? undefined
  } else {
    const record = headers as Readonly<Record<string, unknown>>
    id = valueOf(lookup(record, "webhook-id"), "webhook-id")
    timestamp = valueOf(lookup(record, "webhook-timestamp"), "webhook-timestamp")
    signature = valueOf(lookup(record, "webhook-signature"), "webhook-signature")
  }
  if (!id || !timestamp || !signature) {
    const missing = names.filter((_, i) => ![id, timestamp, signature][i])
    return fail(
      "missing_header",
      `Missing required header${missing.length > 1 ? "s" : ""}: ${missing.join(", ")}.${missingHint(headers)}`
    )
  }
  return { id, timestamp, signature }
}

/** Eleven digits reach the year 5138; a longer value is a mistake (usually milliseconds). */
const maxTimestampDigits = 11

/** The `webhook-timestamp` value as Unix seconds: digits only, no sign, no leading zero, no fraction. */
export const parseTimestamp = (value: string): number => {
  const length = value.length
  let valid = length > 0 && length <= maxTimestampDigits && (length === 1 || value.charCodeAt(0) !== 48)
  for (let i = 0; valid && i < length; i++) {
    const c = value.charCodeAt(i)
    valid = c >= 48 && c <= 57
  }
  if (!valid) {
    const hint = value.includes(",")
      ? " It looks like the header arrived more than once."
      : /^\d{12,16}$/.test(value)
      ? " It looks like milliseconds; the header carries seconds."
      : ""
    return fail(
      "invalid_timestamp",
      `The webhook-timestamp header must be Unix seconds (an integer), got ${JSON.stringify(value.slice(0, 40))}.${hint}`
    )
  }
  return Number(value)
}

/** The base64 of a 32-byte HMAC-SHA256, padded: the only spelling a v1 signature has. */
export const signatureLength = 44
const space = 32
const tab = 9
const comma = 44

/**
 * Calls `visit` with where each entry of a `webhook-signature` value starts
 * and stops. Entries are separated by spaces (or tabs); a trailing comma is
 * left out of an entry, for a header that arrived on several lines and was
 * joined with ", ".
 */
const forEachEntry = (header: string, visit: (start: number, stop: number) => void): void => {
  const length = header.length
  let start = 0
  while (start < length) {
    let c = header.charCodeAt(start)
    if (c === space || c === tab) {
      start++
      continue
    }
    let end = start + 1
    while (end < length && (c = header.charCodeAt(end)) !== space && c !== tab) end++
    visit(start, header.charCodeAt(end - 1) === comma ? end - 1 : end)
    start = end
  }
}

/**
 * Where the signature of each `v1` entry of a `webhook-signature` value
 * starts. Entries of other versions, and `v1` entries that are not 44
 * characters long, cannot match and are skipped.
 */
export const signatureOffsets = (header: string): Array<number> => {
  const offsets: Array<number> = []
  forEachEntry(header, (start, stop) => {
    if (
      stop - start === signatureLength + 3 && header.charCodeAt(start) === 118 && header.charCodeAt(start + 1) === 49 &&
      header.charCodeAt(start + 2) === comma
    ) {
      offsets.push(start + 3)
    }
  })
  return offsets
}

/**
 * Whether the signature at `offset` in `header` is `expected`, in constant
 * time: every character is compared whatever the first difference. Comparing
 * the canonical base64 text is comparing the bytes, without decoding or
 * allocating anything.
 */
export const signatureMatches = (header: string, offset: number, expected: string): boolean => {
  if (expected.length !== signatureLength) return false
  let difference = 0
  for (let i = 0; i < signatureLength; i++) difference |= header.charCodeAt(offset + i) ^ expected.charCodeAt(i)
  return difference === 0
}

/** The base64 of a 64-byte Ed25519 signature, padded: the only spelling a v1a signature has. */
export const ed25519SignatureLength = 88
const ed25519SignatureBytes = 64

/**
 * The signatures of the `v1a` entries of a `webhook-signature` value, as
 * bytes. Entries that are not the padded base64 of 64 bytes cannot verify
 * and are skipped, as are entries of other versions.
 */
export const ed25519Signatures = (header: string): Array<Uint8Array> => {
  const signatures: Array<Uint8Array> = []
  forEachEntry(header, (start, stop) => {
    if (
      stop - start === ed25519SignatureLength + 4 && header.charCodeAt(start) === 118 && header.charCodeAt(start + 1) === 49 &&
      header.charCodeAt(start + 2) === 97 && header.charCodeAt(start + 3) === comma
    ) {
      const signature = decodeBase64(header.slice(start + 4, stop))
      if (signature !== undefined && signature.length === ed25519SignatureBytes) signatures.push(signature)
    }
  })
  return signatures
}

/** Which schemes a verifier can check: `v1` with whsec_ secrets, `v1a` with whpk_ public keys. */
export interface Checks {
  readonly v1: boolean
  readonly v1a: boolean
}

/** What was in a `webhook-signature` value that yielded no entry the verifier can check, for the error message. */
export const describeSignatures = (header: string, checks: Checks = { v1: true, v1a: false }): string => {
  const entries = header.split(/[ \t]+/).filter((e) => e.length > 0)
  const count = (prefix: string) => entries.filter((e) => e.startsWith(prefix)).length
  const v1 = count("v1,")
  const v1a = count("v1a,")
  if (checks.v1 && v1 > 0) return `its ${v1} v1 entr${v1 === 1 ? "y is" : "ies are"} not the padded base64 of a 32-byte HMAC-SHA256 (44 characters)`
  if (checks.v1a && v1a > 0) {
    return `its ${v1a} v1a entr${v1a === 1 ? "y is" : "ies are"} not the padded base64 of a 64-byte Ed25519 signature (88 characters)`
  }
  if (!checks.v1a && v1a > 0) {
    return "it has only v1a (Ed25519) entries, which a whsec_ secret cannot check: verify with the subscription's public key " +
      "(whpk_…, listed by GET /v1/webhooks/{id}/public-keys)"
  }
  if (!checks.v1 && v1 > 0) {
    return "it has only v1 (HMAC) entries, which a whpk_ public key cannot check: the subscription signs with v1, so verify with " +
      "its whsec_ secret, or rotate it to v1a"
  }
  const wanted = checks.v1 && checks.v1a ? "v1 or v1a" : checks.v1 ? "v1" : "v1a"
  const versions = [...new Set(entries.map((e) => e.split(/[,=]/, 1)[0]))].slice(0, 5)
  if (header.includes("v1=")) return `it has no ${wanted} entries (entries are written v1,<base64>, not v1=<hex>)`
  return `it has no ${wanted} entries${versions.length > 0 ? ` (versions found: ${versions.join(", ")})` : ""}`
}
