/**
 * The same Express receiver written against the `Webhook` class, which has
 * the shape of the `standardwebhooks` library's: moving to this package is one
 * import. `OPSPLATFORM_WEBHOOK_SECRET=whsec_… PORT=3000 node src/standardwebhooks.ts`.
 */
import express from "express"
// #region standardwebhooks
import { Webhook, WebhookVerificationError } from "@opsplatform/webhooks-verify"

const wh = new Webhook(process.env.OPSPLATFORM_WEBHOOK_SECRET!) // also new Webhook(keyBytes, { format: "raw" })
// #endregion standardwebhooks
const app = express()

app.post("/webhooks/opsplatform", express.raw({ type: "application/json" }), (req, res) => {
  try {
    const body = wh.verify(req.body, req.headers) as { id: string; type: string } // the parsed JSON
    console.log(`verified ${body.type} ${body.id}`)
    res.sendStatus(204)
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error
    res.status(400).json({ code: error.code })
  }
})

const port = Number(process.env.PORT ?? 3000)
app.listen(port, "127.0.0.1", () => console.log(`receiving on http://127.0.0.1:${port}/webhooks/opsplatform`))
