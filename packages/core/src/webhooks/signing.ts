import { Effect } from "effect"
import { Mac, SecureRandom, Signature } from "effect/crypto"
import { decodeBase64, encodeBase64 } from "../shared/secrets.ts"
import type { SigningScheme } from "./model.ts"

/**
 * Standard Webhooks signing over `{webhook-id}.{webhook-timestamp}.{raw body}`,
 * one entry per active key, newest first:
 *
 * - `v1`: the base64 HMAC-SHA256, keyed with the bytes after `whsec_`;
 * - `v1a`: the base64 Ed25519 signature (64 bytes), with the private key
 *   `whsk_` + base64 of the 32-byte seed followed by the 32-byte public key
 *   (the 64-byte form libsodium, TweetNaCl and Svix use); receivers hold
 *   `whpk_` + base64 of the 32-byte public key.
 */

export const SECRET_PREFIX = "whsec_"
export const SECRET_BYTES = 32
export const PRIVATE_KEY_PREFIX = "whsk_"
export const PUBLIC_KEY_PREFIX = "whpk_"
const SEED_BYTES = 32
const PUBLIC_KEY_BYTES = 32

/** A new signing secret: `whsec_` + base64 of 32 random bytes. */
export const generateSecret: Effect.Effect<string, never, SecureRandom.SecureRandom> = Effect.flatMap(
  SecureRandom.SecureRandom,
  (random) => Effect.map(random.randomBytes(SECRET_BYTES), (bytes) => SECRET_PREFIX + encodeBase64(bytes))
)

/** A new Ed25519 key pair: the private key to seal (`whsk_…`) and the public key to show (`whpk_…`). */
export const generateKeyPair: Effect.Effect<
  { readonly privateKey: string; readonly publicKey: string },
  never,
  SecureRandom.SecureRandom | Signature.Signature
> = Effect.gen(function*() {
  const random = yield* SecureRandom.SecureRandom
  const signature = yield* Signature.Signature
  const seed = yield* random.randomBytes(SEED_BYTES)
  const publicKey = yield* Signature.privateKey(Signature.ed25519, seed).pipe(
    Effect.flatMap(signature.publicKeyOf),
    Effect.flatMap(Signature.toBytes),
    Effect.orDie
  )
  const both = new Uint8Array(SEED_BYTES + PUBLIC_KEY_BYTES)
  both.set(seed, 0)
  both.set(publicKey, SEED_BYTES)
  return { privateKey: PRIVATE_KEY_PREFIX + encodeBase64(both), publicKey: PUBLIC_KEY_PREFIX + encodeBase64(publicKey) }
})

/** The HMAC key of a secret: the base64-decoded part after `whsec_`. */
export const secretKeyBytes = (secret: string): Uint8Array => {
  if (!secret.startsWith(SECRET_PREFIX)) throw new TypeError("A webhook secret starts with whsec_")
  return decodeBase64(secret.slice(SECRET_PREFIX.length))
}

export const macKey = (secret: string): Effect.Effect<Mac.Key> =>
  Effect.orDie(Mac.key(Mac.hmacSha256, secretKeyBytes(secret)))

/** The Ed25519 signing key of a `whsk_` private key: its 32-byte seed. */
export const privateKeyOf = (privateKey: string): Effect.Effect<Signature.PrivateKey<Signature.Ed25519>> => {
  if (!privateKey.startsWith(PRIVATE_KEY_PREFIX)) return Effect.die(new TypeError("A webhook private key starts with whsk_"))
  const bytes = decodeBase64(privateKey.slice(PRIVATE_KEY_PREFIX.length))
  if (bytes.length !== SEED_BYTES + PUBLIC_KEY_BYTES) {
    return Effect.die(new TypeError("A webhook private key holds 64 bytes: the seed and the public key"))
  }
  return Effect.orDie(Signature.privateKey(Signature.ed25519, bytes.subarray(0, SEED_BYTES)))
}

/** A key ready to sign deliveries, of either scheme. */
export type SigningKey =
  | { readonly scheme: "v1"; readonly key: Mac.Key }
  | { readonly scheme: "v1a"; readonly key: Signature.PrivateKey<Signature.Ed25519> }

/** The signing key of an opened secret (`whsec_…`) or private key (`whsk_…`) of the given scheme. */
export const signingKey = (scheme: SigningScheme, opened: string): Effect.Effect<SigningKey> =>
  scheme === "v1"
    ? Effect.map(macKey(opened), (key) => ({ scheme, key }))
    : Effect.map(privateKeyOf(opened), (key) => ({ scheme, key }))

const encoder = new TextEncoder()

/** The signed content: `{id}.{timestamp}.` followed by the raw body bytes. */
export const signedContent = (id: string, timestamp: number, body: Uint8Array): Uint8Array => {
  const prefix = encoder.encode(`${id}.${timestamp}.`)
  const content = new Uint8Array(prefix.length + body.length)
  content.set(prefix, 0)
  content.set(body, prefix.length)
  return content
}

/**
 * The `webhook-signature` header value: `v1,<base64>` or `v1a,<base64>` per
 * key, space-separated, in the order given (newest key first).
 */
export const signatureHeader = (
  keys: ReadonlyArray<SigningKey>,
  id: string,
  timestamp: number,
  body: Uint8Array
): Effect.Effect<string, never, Mac.Mac | Signature.Signature> =>
  Effect.gen(function*() {
    const mac = yield* Mac.Mac
    const signature = yield* Signature.Signature
    const content = signedContent(id, timestamp, body)
    const entries = yield* Effect.forEach(keys, (k) =>
      k.scheme === "v1"
        ? Effect.map(Effect.orDie(mac.sign(k.key, content)), (tag) => `v1,${encodeBase64(tag)}`)
        : Effect.map(Effect.orDie(signature.sign(k.key, content)), (signed) => `v1a,${encodeBase64(signed)}`))
    return entries.join(" ")
  })

/** What a sealed signing secret is bound to: its own row, so a sealed value cannot be moved to another. */
export const secretContext = (secretId: string): string => `webhook-secret:${secretId}`
