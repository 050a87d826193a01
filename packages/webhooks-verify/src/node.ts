/**
 * The entry point on runtimes with `node:crypto` (Node, Deno, Bun): native
 * HMAC for every path, keys prepared once per verifier.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import type { WebhookSecret } from "./secret.ts"
import { bindApi, type CryptoBackend, WebhookWith, type WebhookOptions, type WebhooksApi } from "./verifier.ts"

export * from "./common.ts"

const hmac = (key: Uint8Array, prefix: string, message: string | Uint8Array): Uint8Array =>
  createHmac("sha256", key).update(prefix).update(message).digest()

const node: CryptoBackend<Uint8Array> = {
  importKey: (raw) => raw,
  hmac,
  hmacAsync: (key, prefix, message) => {
    try {
      return Promise.resolve(hmac(key, prefix, message))
    } catch (error) {
      return Promise.reject(error)
    }
  },
  equal: (a, b) => a.length === b.length && timingSafeEqual(a, b),
  randomBytes: (size) => randomBytes(size)
}

export const { createVerifier, sign, generateSecret }: WebhooksApi = bindApi(node)

/** Drop-in for the `standardwebhooks` library's `Webhook`. */
export class Webhook extends WebhookWith {
  constructor(secret: WebhookSecret, options?: WebhookOptions) {
    super(node, secret, options)
  }
}
