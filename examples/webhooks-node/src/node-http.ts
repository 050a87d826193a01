/**
 * The smallest receiver: Node's own `http` server, no framework.
 * `OPSPLATFORM_WEBHOOK_SECRET=whsec_… PORT=3000 node src/node-http.ts`.
 */
import { createServer, type IncomingHttpHeaders } from "node:http"
import { WebhookVerificationError } from "@opsplatform/webhooks-verify"
import { handle } from "./handle.ts"

// #region quickstart
import { createVerifier } from "@opsplatform/webhooks-verify"

const verifier = createVerifier(process.env.OPSPLATFORM_WEBHOOK_SECRET!) // "whsec_…"
const verified = (rawBody: Uint8Array, headers: IncomingHttpHeaders) =>
  verifier.verify(rawBody, headers).event // typed by its type; throws if forged or stale
// #endregion quickstart

const port = Number(process.env.PORT ?? 3000)
createServer(async (req, res) => {
  if (req.method !== "POST" || req.url !== "/webhooks/opsplatform") return void res.writeHead(404).end()
  const rawBody = Buffer.concat(await Array.fromAsync(req as AsyncIterable<Buffer>))
  try {
    handle(verified(rawBody, req.headers))
    res.writeHead(204).end()
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error
    res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ code: error.code }))
  }
}).listen(port, "127.0.0.1", () => console.log(`receiving on http://127.0.0.1:${port}/webhooks/opsplatform`))
