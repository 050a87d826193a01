import { encodeBase64 } from "../base64.ts"
import { type HmacSha256Key, hmacSha256, prepareHmacSha256Key } from "../sha256.ts"
import type { Runtime } from "../verifier.ts"

interface WebKey {
  readonly raw: Uint8Array<ArrayBuffer>
  readonly prepared: HmacSha256Key
  webCrypto?: Promise<CryptoKey>
}

const utf8Encoder = new TextEncoder()
const utf8Decoder = new TextDecoder()

const webCrypto = (): Crypto => {
  const crypto = (globalThis as { crypto?: Crypto }).crypto
  if (crypto === undefined) throw new Error("This runtime has no Web Crypto (globalThis.crypto)")
  return crypto
}

const hmac = (key: WebKey, prefix: string, message: string | Uint8Array): string =>
  encodeBase64(
    hmacSha256(key.prepared, [utf8Encoder.encode(prefix), typeof message === "string" ? utf8Encoder.encode(message) : message])
  )

/**
 * Browsers and edge workers: Web Crypto for the async path, plain-JavaScript
 * HMAC for the synchronous one (no such runtime has a native synchronous HMAC).
 */
export const webRuntime: Runtime<WebKey> = {
  importKey: (raw) => ({ raw: new Uint8Array(raw), prepared: prepareHmacSha256Key(raw) }),
  hmac,
  hmacAsync: async (key, prefix, message) => {
    const subtle = webCrypto().subtle
    // Insecure browser contexts (plain http) have no SubtleCrypto; the result is the same without it.
    if (subtle === undefined) return hmac(key, prefix, message)
    key.webCrypto ??= subtle.importKey("raw", key.raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
    let data: Uint8Array<ArrayBuffer>
    if (typeof message === "string") {
      data = utf8Encoder.encode(prefix + message)
    } else {
      const head = utf8Encoder.encode(prefix)
      data = new Uint8Array(head.length + message.length)
      data.set(head)
      data.set(message, head.length)
    }
    return encodeBase64(new Uint8Array(await subtle.sign("HMAC", await key.webCrypto, data)))
  },
  randomBytes: (size) => webCrypto().getRandomValues(new Uint8Array(size)),
  decodeUtf8: (bytes) => utf8Decoder.decode(bytes)
}
