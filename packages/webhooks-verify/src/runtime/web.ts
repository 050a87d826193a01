import { encodeBase64 } from "../base64.ts"
import { type HmacSha256Key, hmacSha256, prepareHmacSha256Key } from "../sha256.ts"
import type { Runtime } from "../verifier.ts"

interface WebKey {
  readonly raw: Uint8Array<ArrayBuffer>
  readonly prepared: HmacSha256Key
  webCrypto?: Promise<CryptoKey>
}

/** An Ed25519 key's bytes, and its `CryptoKey` once first used (imported once per verifier, not per delivery). */
interface WebEd25519Key {
  readonly der: Uint8Array<ArrayBuffer>
  imported?: Promise<CryptoKey>
}

const utf8Encoder = new TextEncoder()
const utf8Decoder = new TextDecoder()

const webCrypto = (): Crypto => {
  const crypto = (globalThis as { crypto?: Crypto }).crypto
  if (crypto === undefined) throw new Error("This runtime has no Web Crypto (globalThis.crypto)")
  return crypto
}

const subtleForEd25519 = (): SubtleCrypto => {
  const subtle = webCrypto().subtle
  if (subtle === undefined) {
    throw new Error("This context has no SubtleCrypto (browsers offer it on https and localhost only), which Ed25519 (v1a) needs")
  }
  return subtle
}

/** Ed25519 in Web Crypto: Chrome 137, Firefox 129, Safari 17, Node 20, Deno, Bun and Workers. */
const ed25519 = { name: "Ed25519" }

const importEd25519 = (key: WebEd25519Key, format: "raw" | "pkcs8", usage: "verify" | "sign"): Promise<CryptoKey> =>
  key.imported ??= subtleForEd25519().importKey(format, key.der, ed25519, false, [usage]).catch((error: unknown) => {
    throw new Error(
      `This runtime's Web Crypto has no Ed25519, which v1a signatures need (${error instanceof Error ? error.message : String(error)})`
    )
  })

/** The signed bytes: `prefix` as UTF-8, then the message (a string as UTF-8). */
const signedBytes = (prefix: string, message: string | Uint8Array): Uint8Array<ArrayBuffer> => {
  if (typeof message === "string") return utf8Encoder.encode(prefix + message)
  const head = utf8Encoder.encode(prefix)
  const data = new Uint8Array(head.length + message.length)
  data.set(head)
  data.set(message, head.length)
  return data
}

const hmac = (key: WebKey, prefix: string, message: string | Uint8Array): string =>
  encodeBase64(
    hmacSha256(key.prepared, [utf8Encoder.encode(prefix), typeof message === "string" ? utf8Encoder.encode(message) : message])
  )

/** The PKCS #8 (RFC 8410) header of an Ed25519 private key, before its 32-byte seed. */
const pkcs8Prefix = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]

/**
 * Browsers and edge workers: Web Crypto for the async path, plain-JavaScript
 * HMAC for the synchronous one (no such runtime has a native synchronous
 * HMAC). Ed25519 is Web Crypto's, so asynchronous only.
 */
export const webRuntime: Runtime<WebKey, WebEd25519Key, WebEd25519Key> = {
  importKey: (raw) => ({ raw: new Uint8Array(raw), prepared: prepareHmacSha256Key(raw) }),
  hmac,
  hmacAsync: async (key, prefix, message) => {
    const subtle = webCrypto().subtle
    // Insecure browser contexts (plain http) have no SubtleCrypto; the result is the same without it.
    if (subtle === undefined) return hmac(key, prefix, message)
    key.webCrypto ??= subtle.importKey("raw", key.raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
    return encodeBase64(new Uint8Array(await subtle.sign("HMAC", await key.webCrypto, signedBytes(prefix, message))))
  },
  importPublicKey: (raw) => ({ der: new Uint8Array(raw) }),
  verifyEd25519Async: async (key, prefix, message, signature) =>
    subtleForEd25519().verify(ed25519, await importEd25519(key, "raw", "verify"), new Uint8Array(signature), signedBytes(prefix, message)),
  importPrivateKey: (seed) => ({ der: new Uint8Array([...pkcs8Prefix, ...seed]) }),
  signEd25519Async: async (key, prefix, message) =>
    new Uint8Array(await subtleForEd25519().sign(ed25519, await importEd25519(key, "pkcs8", "sign"), signedBytes(prefix, message))),
  generateEd25519: async () => {
    const subtle = subtleForEd25519()
    const pair = await subtle.generateKey(ed25519, true, ["sign", "verify"]) as CryptoKeyPair
    const pkcs8 = new Uint8Array(await subtle.exportKey("pkcs8", pair.privateKey))
    return { seed: pkcs8.slice(pkcs8.length - 32), publicKey: new Uint8Array(await subtle.exportKey("raw", pair.publicKey)) }
  },
  randomBytes: (size) => webCrypto().getRandomValues(new Uint8Array(size)),
  decodeUtf8: (bytes) => utf8Decoder.decode(bytes)
}
