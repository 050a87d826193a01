import { Context, Effect } from "effect"
import { Digest, Kdf, SecureRandom } from "effect/crypto"

/**
 * Secrets handling in one place: high-entropy tokens are random 256-bit values
 * of which only the SHA-256 hash is stored; low-entropy secrets (PINs, member
 * passwords) are stretched with Argon2id and a per-record salt, or PBKDF2 on
 * runtimes without Argon2. Comparisons are constant-time.
 */

const bytesToBase64Url = (bytes: Uint8Array): string => {
  let binary = ""
  for (const b of bytes) binary += String.fromCharCode(b)
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/(?<!=)=+$/, "")
}

const bytesToBase64 = (bytes: Uint8Array): string => {
  let binary = ""
  for (const b of bytes) binary += String.fromCharCode(b)
  return btoa(binary)
}

const base64ToBytes = (text: string): Uint8Array => Uint8Array.from(atob(text), (c) => c.charCodeAt(0))

/** Lower-case hexadecimal, two digits per byte. */
export const encodeHex = (bytes: Uint8Array): string => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")

export const encodeBase64 = bytesToBase64
export const encodeBase64Url = bytesToBase64Url
export const decodeBase64 = base64ToBytes

/** The UTF-8 text behind a base64url string, or undefined when it is not one. */
export const decodeBase64UrlText = (text: string): string | undefined => {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(base64ToBytes(text.replace(/-/g, "+").replace(/_/g, "/")))
  } catch {
    return undefined
  }
}

/** Constant-time equality of two byte strings (length is not secret). */
export const constantTimeEqual = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!
  return diff === 0
}

export const constantTimeEqualStrings = (a: string, b: string): boolean =>
  constantTimeEqual(new TextEncoder().encode(a), new TextEncoder().encode(b))

/** A new token: `prefix` + base64url of 32 random bytes (256 bits). */
export const generateToken = (prefix: string): Effect.Effect<string, never, SecureRandom.SecureRandom> =>
  Effect.flatMap(SecureRandom.SecureRandom, (random) =>
    Effect.map(random.randomBytes(32), (bytes) => prefix + bytesToBase64Url(bytes)))

export const randomBytes = (size: number): Effect.Effect<Uint8Array, never, SecureRandom.SecureRandom> =>
  Effect.flatMap(SecureRandom.SecureRandom, (random) => random.randomBytes(size))

/** SHA-256 of a token, lowercase hex: what the database keeps instead of the token. */
export const hashToken = (token: string): Effect.Effect<string, never, Digest.Digest> =>
  Effect.flatMap(Digest.Digest, (digest) => digest.digestHex(Digest.sha256, new TextEncoder().encode(token)))

/** Cost of the low-entropy hash. Tests lower it; production keeps the defaults. */
export const LowEntropyHashCost = Context.Reference<{
  readonly argon2: { readonly memory: number; readonly passes: number; readonly parallelism: number }
  readonly pbkdf2Iterations: number
}>("@opsplatform/core/shared/LowEntropyHashCost", {
  defaultValue: () => ({ argon2: { memory: 19_456, passes: 2, parallelism: 1 }, pbkdf2Iterations: 600_000 })
})

const derive = (algorithm: Kdf.Algorithm, secret: string, salt: Uint8Array) =>
  Effect.flatMap(Kdf.Kdf, (kdf) => kdf.derive(algorithm, new TextEncoder().encode(secret), { salt, length: 32 }))

/**
 * Hashes a PIN or password. The result is a PHC-style string that records the
 * algorithm and its parameters, so costs can rise later without breaking
 * existing hashes.
 */
export const hashLowEntropy = (
  secret: string
): Effect.Effect<string, never, Kdf.Kdf | SecureRandom.SecureRandom> =>
  Effect.gen(function*() {
    const cost = yield* LowEntropyHashCost
    const salt = yield* randomBytes(16)
    const argon = Kdf.argon2id(cost.argon2)
    const viaArgon = yield* Effect.result(derive(argon, secret, salt))
    if (viaArgon._tag === "Success") {
      return `$argon2id$v=19$m=${argon.memory},t=${argon.passes},p=${argon.parallelism}$${bytesToBase64(salt)}$${
        bytesToBase64(viaArgon.success)
      }`
    }
    const pbkdf2 = Kdf.pbkdf2({ hash: Digest.sha256, iterations: cost.pbkdf2Iterations })
    const hash = yield* Effect.orDie(derive(pbkdf2, secret, salt))
    return `$pbkdf2-sha256$i=${cost.pbkdf2Iterations}$${bytesToBase64(salt)}$${bytesToBase64(hash)}`
  })

const phcArgon = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/
const phcPbkdf2 = /^\$pbkdf2-sha256\$i=(\d+)\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/

/** Checks a PIN or password against its stored hash, in constant time. */
export const verifyLowEntropy = (
  secret: string,
  stored: string
): Effect.Effect<boolean, never, Kdf.Kdf> =>
  Effect.gen(function*() {
    const argon = phcArgon.exec(stored)
    if (argon) {
      const algorithm = Kdf.argon2id({ memory: Number(argon[1]), passes: Number(argon[2]), parallelism: Number(argon[3]) })
      const derived = yield* Effect.orDie(derive(algorithm, secret, base64ToBytes(argon[4]!)))
      return constantTimeEqual(derived, base64ToBytes(argon[5]!))
    }
    const pbkdf2 = phcPbkdf2.exec(stored)
    if (pbkdf2) {
      const algorithm = Kdf.pbkdf2({ hash: Digest.sha256, iterations: Number(pbkdf2[1]) })
      const derived = yield* Effect.orDie(derive(algorithm, secret, base64ToBytes(pbkdf2[2]!)))
      return constantTimeEqual(derived, base64ToBytes(pbkdf2[3]!))
    }
    return false
  })
