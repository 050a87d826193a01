import { decodeBase64, encodeBase64 } from "./base64.ts"
import { fail } from "./errors.ts"

export const secretPrefix = "whsec_"

/** A signing secret as the platform shows it (`whsec_…`), the same without the prefix, or the raw key bytes. */
export type WebhookSecret = string | Uint8Array

const describe = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "an array" : typeof value

/**
 * The HMAC key of a secret. Messages name the usual mistakes and never repeat
 * the secret.
 */
export const decodeSecret = (secret: unknown): Uint8Array => {
  if (secret instanceof Uint8Array) {
    if (secret.length === 0) fail("invalid_secret", "The secret is empty.")
    return secret.slice()
  }
  if (typeof secret !== "string") {
    return fail(
      "invalid_secret",
      `The secret must be a string (whsec_…) or the key bytes, got ${describe(secret)}; is the environment variable set?`
    )
  }
  if (secret.length === 0) fail("invalid_secret", "The secret is empty; is the environment variable set?")
  if (secret.trim() !== secret) {
    fail(
      "invalid_secret",
      "The secret has leading or trailing whitespace (often a newline read from a file or an environment variable); trim it."
    )
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
  return key
}

/** One secret or several (during the receiver's own rotation), as a non-empty list of keys. */
export const decodeSecrets = (secrets: unknown): ReadonlyArray<Uint8Array> => {
  if (!Array.isArray(secrets)) return [decodeSecret(secrets)]
  if (secrets.length === 0) fail("invalid_secret", "No secret was given: the list of secrets is empty.")
  return secrets.map(decodeSecret)
}

export const formatSecret = (key: Uint8Array): string => secretPrefix + encodeBase64(key)
