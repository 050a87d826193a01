/**
 * A webhook receiver on Fastify: `OPSPLATFORM_WEBHOOK_SECRET=whsec_… PORT=3000 node src/fastify.ts`.
 */
// #region fastify
import Fastify from "fastify"
import { createVerifier, WebhookVerificationError } from "@opsplatform/webhooks-verify"
import { handle } from "./handle.ts"

const verifier = createVerifier(process.env.OPSPLATFORM_WEBHOOK_SECRET!)
const app = Fastify()
// Keep JSON bodies as bytes (register this in the webhook route's own plugin to leave other routes alone).
app.addContentTypeParser("application/json", { parseAs: "buffer" }, (_request, body, done) => done(null, body))

app.post("/webhooks/opsplatform", async (request, reply) => {
  try {
    const { event } = verifier.verify(request.body as Buffer, request.headers)
    handle(event)
    return reply.code(204).send()
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error
    return reply.code(400).send({ code: error.code })
  }
})
// #endregion fastify

const port = Number(process.env.PORT ?? 3000)
await app.listen({ port, host: "127.0.0.1" })
console.log(`receiving on http://127.0.0.1:${port}/webhooks/opsplatform`)
