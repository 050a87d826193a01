/**
 * The entry point for browsers, edge workers and any runtime without
 * `node:crypto`: Web Crypto for the async path (HMAC and Ed25519),
 * plain-JavaScript HMAC for the synchronous one (`v1` only).
 */
import { webRuntime } from "./runtime/web.ts"
import type { WebhookSecret } from "./secret.ts"
import { bindApi, WebhookWith, type WebhookOptions, type WebhooksApi } from "./verifier.ts"

export * from "./common.ts"

export const { createVerifier, sign, signAsync, generateSecret, generateKeyPair }: WebhooksApi = bindApi(webRuntime)

/** Drop-in for the `standardwebhooks` library's `Webhook`. */
export class Webhook extends WebhookWith {
  constructor(secret: WebhookSecret, options?: WebhookOptions) {
    super(webRuntime, secret, options)
  }
}
