/**
 * A Cloudflare Worker that holds only public keys: the subscription signs
 * with `v1a` (Ed25519), and `OPSPLATFORM_WEBHOOK_PUBLIC_KEYS` lists the
 * `whpk_` keys of `GET /v1/webhooks/{id}/public-keys`, space-separated.
 * Nothing in it can sign a webhook, so it need not be a secret binding.
 * `src/serve.ts` runs it under Node's Web APIs with a queue that prints.
 */
// #region public-key-worker
import { createVerifier, type WebhookVerifier, WebhookVerificationError } from "@opsplatform/webhooks-verify"

let verifier: WebhookVerifier | undefined // built once per isolate: each key is imported once

export default {
  async fetch(request: Request, env: { OPSPLATFORM_WEBHOOK_PUBLIC_KEYS: string; QUEUE: Queue }) {
    verifier ??= createVerifier(env.OPSPLATFORM_WEBHOOK_PUBLIC_KEYS.split(" ")) // "whpk_… whpk_…"
    try {
      const { event } = await verifier.verifyRequest(request) // Ed25519 on Web Crypto
      await env.QUEUE.send(event)
      return new Response(null, { status: 204 })
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error
      return Response.json({ code: error.code }, { status: 400 })
    }
  }
}
// #endregion public-key-worker

/** What the Worker needs of Cloudflare's `Queue` binding. */
interface Queue {
  send(body: unknown): Promise<void>
}
