import { Effect } from "effect"
import { Mac, SecureRandom } from "effect/crypto"
import { decodeBase64, encodeBase64 } from "../shared/secrets.ts"

/**
 * Standard Webhooks v1 signing: the base64 HMAC-SHA256 of
 * `{webhook-id}.{webhook-timestamp}.{raw body}` keyed with the bytes after
 * `whsec_`; one `v1,<signature>` entry per active secret.
 */

export const SECRET_PREFIX = "whsec_"
export const SECRET_BYTES = 32

/** A new signing secret: `whsec_` + base64 of 32 random bytes. */
export const generateSecret: Effect.Effect<string, never, SecureRandom.SecureRandom> = Effect.flatMap(
  SecureRandom.SecureRandom,
  (random) => Effect.map(random.randomBytes(SECRET_BYTES), (bytes) => SECRET_PREFIX + encodeBase64(bytes))
)

/** The HMAC key of a secret: the base64-decoded part after `whsec_`. */
export const secretKeyBytes = (secret: string): Uint8Array => {
  if (!secret.startsWith(SECRET_PREFIX)) throw new TypeError("A webhook secret starts with whsec_")
  return decodeBase64(secret.slice(SECRET_PREFIX.length))
}

export const macKey = (secret: string): Effect.Effect<Mac.Key> =>
  Effect.orDie(Mac.key(Mac.hmacSha256, secretKeyBytes(secret)))

const encoder = new TextEncoder()

/** The signed content: `{id}.{timestamp}.` followed by the raw body bytes. */
export const signedContent = (id: string, timestamp: number, body: Uint8Array): Uint8Array => {
  const prefix = encoder.encode(`${id}.${timestamp}.`)
  const content = new Uint8Array(prefix.length + body.length)
  content.set(prefix, 0)
  content.set(body, prefix.length)
  return content
}

/** The `webhook-signature` header value: `v1,<base64>` per key, space-separated, newest key first. */
export const signatureHeader = (
  keys: ReadonlyArray<Mac.Key>,
  id: string,
  timestamp: number,
  body: Uint8Array
): Effect.Effect<string, never, Mac.Mac> =>
  Effect.flatMap(Mac.Mac, (mac) => {
    const content = signedContent(id, timestamp, body)
    return Effect.map(
      Effect.forEach(keys, (key) => Effect.orDie(mac.sign(key, content))),
      (tags) => tags.map((tag) => `v1,${encodeBase64(tag)}`).join(" ")
    )
  })

/** What a sealed signing secret is bound to: its own row, so a sealed value cannot be moved to another. */
export const secretContext = (secretId: string): string => `webhook-secret:${secretId}`
