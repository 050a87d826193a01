/**
 * A Hono app receiving webhooks (any runtime Hono runs on). `src/serve.ts`
 * runs it under Node's Web APIs.
 */
// #region hono
import { Hono } from "hono"
import { createVerifier, WebhookVerificationError } from "@opsplatform/webhooks-verify"
import { queue } from "./queue.ts"

const verifier = createVerifier(process.env.OPSPLATFORM_WEBHOOK_SECRET!)
export const app = new Hono()

app.post("/webhooks/opsplatform", async (c) => {
  const { event } = await verifier.verifyRequest(c.req.raw) // before anything reads the body
  await queue.push(event)
  return c.body(null, 204)
})
app.onError((error, c) =>
  error instanceof WebhookVerificationError ? c.json({ code: error.code }, 400) : c.text("error", 500))
// #endregion hono
