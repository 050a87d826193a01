import { decodeBase64, encodeBase64 } from "./base64.ts"
import { fail } from "./errors.ts"

export const secretPrefix = "whsec_"
export const publicKeyPrefix = "whpk_"
export const privateKeyPrefix = "whsk_"

/**
 * A key as the platform shows it: a signing secret (`whsec_…`, the same
 * without the prefix, or the raw key bytes) for `v1`, or a public key
 * (`whpk_…`) for `v1a`. Signing also takes a private key (`whsk_…`).
 */
export type WebhookSecret = string | Uint8Array

/** A key, decoded: which scheme it serves and its bytes. */
export type DecodedKey =
  | { readonly kind: "secret"; readonly raw: Uint8Array }
  | { readonly kind: "public"; readonly raw: Uint8Array }
  | { readonly kind: "private"; readonly seed: Uint8Array; readonly publicKey: Uint8Array }

const describe = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "an array" : typeof value

const ed25519PublicKeyBytes = 32

const decodePrefixed = (key: string, prefix: string, bytes: number, what: string): Uint8Array => {
  const raw = decodeBase64(key.slice(prefix.length))
  if (raw === undefined) {
    return fail("invalid_secret", `The ${what} is not ${prefix} followed by standard base64; copy it exactly as the platform shows it.`)
  }
  if (raw.length !== bytes) {
    return fail("invalid_secret", `The ${what} after ${prefix} is ${raw.length} bytes; an Ed25519 ${what} is ${bytes}. Copy it whole.`)
  }
  return raw
}

/**
 * A secret or key, by its prefix. Messages name the usual mistakes and never
 * repeat the key.
 */
export const decodeKey = (secret: unknown): DecodedKey => {
  if (secret instanceof Uint8Array) {
    if (secret.length === 0) fail("invalid_secret", "The secret is empty.")
    return { kind: "secret", raw: secret.slice() }
  }
  if (typeof secret !== "string") {
    return fail(
      "invalid_secret",
      `The secret must be a string (whsec_… or whpk_…) or the key bytes, got ${describe(secret)}; is the environment variable set?`
    )
  }
  if (secret.length === 0) fail("invalid_secret", "The secret is empty; is the environment variable set?")
  if (secret.trim() !== secret) {
    fail(
      "invalid_secret",
      "The secret has leading or trailing whitespace (often a newline read from a file or an environment variable); trim it."
    )
  }
  if (secret.startsWith(publicKeyPrefix)) {
    return { kind: "public", raw: decodePrefixed(secret, publicKeyPrefix, ed25519PublicKeyBytes, "public key") }
  }
  if (secret.startsWith(privateKeyPrefix)) {
    const both = decodePrefixed(secret, privateKeyPrefix, 2 * ed25519PublicKeyBytes, "private key")
    return { kind: "private", seed: both.slice(0, 32), publicKey: both.slice(32) }
  }
  const encoded = secret.startsWith(secretPrefix) ? secret.slice(secretPrefix.length) : secret
  const key = decodeBase64(encoded)
  if (key === undefined) {
    return fail(
      "invalid_secret",
      `The secret is not ${secretPrefix} followed by standard base64; copy it exactly as the platform shows it.`
    )
  }
  if (key.length === 0) fail("invalid_secret", `The secret has no key after the ${secretPrefix} prefix.`)
  return { kind: "secret", raw: key }
}

/** One key or several (during a rotation), as a non-empty list. */
const decodeList = (secrets: unknown): ReadonlyArray<DecodedKey> => {
  if (!Array.isArray(secrets)) return [decodeKey(secrets)]
  if (secrets.length === 0) fail("invalid_secret", "No secret was given: the list of secrets is empty.")
  return secrets.map(decodeKey)
}

/** What a verifier checks with: `whsec_` secrets and `whpk_` public keys. A private key is refused. */
export const decodeVerifyingKeys = (secrets: unknown): ReadonlyArray<Exclude<DecodedKey, { kind: "private" }>> =>
  decodeList(secrets).map((key) =>
    key.kind === "private"
      ? fail(
        "wrong_key_kind",
        "This is a private signing key (whsk_…), which only the sender holds; a receiver verifies with the public key " +
          "(whpk_…) shown on the subscription and listed by GET /v1/webhooks/{id}/public-keys. If the private key was exposed, rotate it."
      )
      : key
  )

/** What signing takes: `whsec_` secrets and `whsk_` private keys. A public key is refused. */
export const decodeSigningKeys = (secrets: unknown): ReadonlyArray<Exclude<DecodedKey, { kind: "public" }>> =>
  decodeList(secrets).map((key) =>
    key.kind === "public"
      ? fail("wrong_key_kind", "A public key (whpk_…) verifies signatures but cannot make them: sign with a whsk_ private key or a whsec_ secret.")
      : key
  )

/** The HMAC key of a `v1` secret; any other kind of key is refused. */
export const decodeSecret = (secret: unknown): Uint8Array => {
  const key = decodeKey(secret)
  if (key.kind !== "secret") {
    return fail("wrong_key_kind", `A ${key.kind === "public" ? "public key (whpk_…)" : "private key (whsk_…)"} is not a whsec_ signing secret.`)
  }
  return key.raw
}

export const formatSecret = (key: Uint8Array): string => secretPrefix + encodeBase64(key)

export const formatKeyPair = (seed: Uint8Array, publicKey: Uint8Array) => {
  const both = new Uint8Array(64)
  both.set(seed, 0)
  both.set(publicKey, 32)
  return { privateKey: privateKeyPrefix + encodeBase64(both), publicKey: publicKeyPrefix + encodeBase64(publicKey) }
}
