/**
 * The entry point for browsers, edge workers and any runtime without
 * `node:crypto`: Web Crypto for the async path, plain-JavaScript HMAC for the
 * synchronous one (no such runtime has a native synchronous HMAC).
 */
import type { WebhookSecret } from "./secret.ts"
import { type HmacSha256Key, hmacSha256, prepareHmacSha256Key } from "./sha256.ts"
import { bindApi, type CryptoBackend, WebhookWith, type WebhookOptions, type WebhooksApi } from "./verifier.ts"

export * from "./common.ts"

interface PortableKey {
  readonly raw: Uint8Array<ArrayBuffer>
  readonly prepared: HmacSha256Key
  webCrypto?: Promise<CryptoKey>
}

const utf8 = new TextEncoder()

const webCrypto = (): Crypto => {
  const crypto = (globalThis as { crypto?: Crypto }).crypto
  if (crypto === undefined) throw new Error("This runtime has no Web Crypto (globalThis.crypto)")
  return crypto
}

/** Constant-time equality: every byte is compared whatever the first difference. */
const equal = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!
  return difference === 0
}

const portable: CryptoBackend<PortableKey> = {
  importKey: (raw) => ({ raw: new Uint8Array(raw), prepared: prepareHmacSha256Key(raw) }),
  hmac: (key, prefix, message) =>
    hmacSha256(key.prepared, [utf8.encode(prefix), typeof message === "string" ? utf8.encode(message) : message]),
  hmacAsync: async (key, prefix, message) => {
    const subtle = webCrypto().subtle
    // Insecure browser contexts (plain http) have no SubtleCrypto; the result is the same without it.
    if (subtle === undefined) return portable.hmac(key, prefix, message)
    key.webCrypto ??= subtle.importKey("raw", key.raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
    let data: Uint8Array<ArrayBuffer>
    if (typeof message === "string") {
      data = utf8.encode(prefix + message)
    } else {
      const head = utf8.encode(prefix)
      data = new Uint8Array(head.length + message.length)
      data.set(head)
      data.set(message, head.length)
    }
    return new Uint8Array(await subtle.sign("HMAC", await key.webCrypto, data))
  },
  equal,
  randomBytes: (size) => webCrypto().getRandomValues(new Uint8Array(size))
}

export const { createVerifier, sign, generateSecret }: WebhooksApi = bindApi(portable)

/** Drop-in for the `standardwebhooks` library's `Webhook`. */
export class Webhook extends WebhookWith {
  constructor(secret: WebhookSecret, options?: WebhookOptions) {
    super(portable, secret, options)
  }
}
