/**
 * A Next.js route handler (App Router) receiving webhooks at
 * `/webhooks/opsplatform`. `src/serve.ts` runs it under Node's Web APIs.
 */
// #region next
import { createVerifier, WebhookVerificationError } from "@opsplatform/webhooks-verify"
import { queue } from "../../../queue.ts"

const verifier = createVerifier(process.env.OPSPLATFORM_WEBHOOK_SECRET!)

export async function POST(request: Request) {
  try {
    const { event } = await verifier.verifyRequest(request)
    await queue.push(event)
    return new Response(null, { status: 204 })
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error
    return Response.json({ code: error.code }, { status: 400 })
  }
}
// #endregion next
