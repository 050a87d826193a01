/**
 * The entry point on runtimes with `node:crypto` (Node, Deno, Bun): native
 * HMAC and Ed25519 on every path, keys prepared once per verifier.
 */
import { nodeRuntime } from "./runtime/node.ts"
import type { WebhookSecret } from "./secret.ts"
import { bindApi, WebhookWith, type WebhookOptions, type WebhooksApi } from "./verifier.ts"

export * from "./common.ts"

export const { createVerifier, sign, signAsync, generateSecret, generateKeyPair }: WebhooksApi = bindApi(nodeRuntime)

/** Drop-in for the `standardwebhooks` library's `Webhook`. */
export class Webhook extends WebhookWith {
  constructor(secret: WebhookSecret, options?: WebhookOptions) {
    super(nodeRuntime, secret, options)
  }
}
