import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, randomBytes, sign, verify } from "node:crypto"
import { fail } from "../errors.ts"
import type { Runtime } from "../verifier.ts"

const hmac = (key: Uint8Array, prefix: string, message: string | Uint8Array): string =>
  createHmac("sha256", key).update(prefix).update(message).digest("base64")

const hasByteOrderMark = (bytes: Uint8Array): boolean =>
  bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf

/** The DER headers of an Ed25519 SubjectPublicKeyInfo and PKCS #8 key (RFC 8410), before the 32 key bytes. */
const spkiPrefix = Buffer.from("302a300506032b6570032100", "hex")
const pkcs8Prefix = Buffer.from("302e020100300506032b657004220420", "hex")

/** The signed bytes: `prefix` as UTF-8, then the message (a string as UTF-8). */
const signedBytes = (prefix: string, message: string | Uint8Array): Buffer =>
  typeof message === "string" ? Buffer.from(prefix + message, "utf8") : Buffer.concat([Buffer.from(prefix, "utf8"), message])

const settle = <A>(run: () => A): Promise<A> => {
  try {
    return Promise.resolve(run())
  } catch (error) {
    return Promise.reject(error)
  }
}

const verifyEd25519 = (key: KeyObject, prefix: string, message: string | Uint8Array, signature: Uint8Array): boolean =>
  verify(null, signedBytes(prefix, message), key, signature)

const signEd25519 = (key: KeyObject, prefix: string, message: string | Uint8Array): Uint8Array =>
  new Uint8Array(sign(null, signedBytes(prefix, message), key))

/**
 * `node:crypto` (Node, Deno, Bun). The base64 digest is compared as text, so
 * no buffer is allocated for it; Buffer's UTF-8 decoder replaces invalid
 * sequences exactly as `TextDecoder` does, at about half the cost. Ed25519
 * keys become `KeyObject`s once, when the verifier is made.
 */
export const nodeRuntime: Runtime<Uint8Array, KeyObject, KeyObject> = {
  importKey: (raw) => raw,
  hmac,
  hmacAsync: (key, prefix, message) => settle(() => hmac(key, prefix, message)),
  importPublicKey: (raw) => createPublicKey({ key: Buffer.concat([spkiPrefix, raw]), format: "der", type: "spki" }),
  verifyEd25519,
  verifyEd25519Async: (key, prefix, message, signature) => settle(() => verifyEd25519(key, prefix, message, signature)),
  importPrivateKey: (seed, publicKey) => {
    const key = createPrivateKey({ key: Buffer.concat([pkcs8Prefix, seed]), format: "der", type: "pkcs8" })
    const derived = createPublicKey(key).export({ format: "der", type: "spki" }).subarray(spkiPrefix.length)
    if (!derived.equals(publicKey)) {
      fail("invalid_secret", "The private key's public half does not match its seed: copy the whsk_ key whole.")
    }
    return key
  },
  signEd25519,
  signEd25519Async: (key, prefix, message) => settle(() => signEd25519(key, prefix, message)),
  generateEd25519: () =>
    settle(() => {
      const pair = generateKeyPairSync("ed25519")
      return {
        seed: new Uint8Array(pair.privateKey.export({ format: "der", type: "pkcs8" }).subarray(pkcs8Prefix.length)),
        publicKey: new Uint8Array(pair.publicKey.export({ format: "der", type: "spki" }).subarray(spkiPrefix.length))
      }
    }),
  randomBytes: (size) => randomBytes(size),
  decodeUtf8: (bytes) => {
    const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    return buffer.toString("utf8", hasByteOrderMark(bytes) ? 3 : 0)
  }
}
