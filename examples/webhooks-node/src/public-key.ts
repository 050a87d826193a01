/**
 * A receiver that holds only public keys: the subscription signs with `v1a`
 * (Ed25519), and `OPSPLATFORM_WEBHOOK_PUBLIC_KEYS` lists the `whpk_` keys of
 * `GET /v1/webhooks/{id}/public-keys`, space-separated. Nothing here could
 * sign a webhook. `OPSPLATFORM_WEBHOOK_PUBLIC_KEYS="whpk_…" PORT=3000 node src/public-key.ts`.
 */
import { createServer, type IncomingHttpHeaders } from "node:http"
import { WebhookVerificationError } from "@opsplatform/webhooks-verify"
import { handle } from "./handle.ts"

// #region public-key-node
import { createVerifier } from "@opsplatform/webhooks-verify"

const verifier = createVerifier(process.env.OPSPLATFORM_WEBHOOK_PUBLIC_KEYS!.split(" ")) // "whpk_… whpk_…"
const verified = (rawBody: Uint8Array, headers: IncomingHttpHeaders) =>
  verifier.verify(rawBody, headers).event // synchronous on Node: Ed25519 through node:crypto
// #endregion public-key-node

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
