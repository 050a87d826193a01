/**
 * A Cloudflare Worker receiving webhooks: deploy it with the secret as
 * `OPSPLATFORM_WEBHOOK_SECRET` and a Queues binding `QUEUE`. `src/serve.ts`
 * runs it under Node's Web APIs with a queue that prints.
 */
// #region worker
import { createVerifier, type WebhookVerifier, WebhookVerificationError } from "@opsplatform/webhooks-verify"

let verifier: WebhookVerifier | undefined // built once per isolate: the key is imported once

export default {
  async fetch(request: Request, env: { OPSPLATFORM_WEBHOOK_SECRET: string; QUEUE: Queue }) {
    verifier ??= createVerifier(env.OPSPLATFORM_WEBHOOK_SECRET)
    try {
      const { event } = await verifier.verifyRequest(request)
      await env.QUEUE.send(event)
      return new Response(null, { status: 204 })
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error
      return Response.json({ code: error.code }, { status: 400 })
    }
  }
}
// #endregion worker

/** What the Worker needs of Cloudflare's `Queue` binding. */
interface Queue {
  send(body: unknown): Promise<void>
}
