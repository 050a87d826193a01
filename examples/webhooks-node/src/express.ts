/**
 * A webhook receiver on Express: `OPSPLATFORM_WEBHOOK_SECRET=whsec_… PORT=3000 node src/express.ts`.
 */
// #region express
import express from "express"
import { createVerifier, WebhookVerificationError } from "@opsplatform/webhooks-verify"
import { handle } from "./handle.ts"

const verifier = createVerifier(process.env.OPSPLATFORM_WEBHOOK_SECRET!)
const app = express()

// express.raw keeps the body as the bytes that were signed; a JSON parser would change them.
app.post("/webhooks/opsplatform", express.raw({ type: "application/json" }), (req, res) => {
  try {
    const { event } = verifier.verify(req.body, req.headers) // throws WebhookVerificationError
    handle(event) // answer fast, work later
    res.sendStatus(204)
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error
    res.status(400).json({ code: error.code })
  }
})
// #endregion express

const port = Number(process.env.PORT ?? 3000)
app.listen(port, "127.0.0.1", () => console.log(`receiving on http://127.0.0.1:${port}/webhooks/opsplatform`))
