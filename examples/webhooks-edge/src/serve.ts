/**
 * Runs one of the Fetch handlers on Node (`@hono/node-server` turns Node's
 * requests into Web `Request`s and back), at `/webhooks/opsplatform`:
 *
 *     HANDLER=worker|next|hono OPSPLATFORM_WEBHOOK_SECRET=whsec_… PORT=3000 npm start
 *     HANDLER=public-key-worker OPSPLATFORM_WEBHOOK_PUBLIC_KEYS="whpk_…" PORT=3000 npm start
 */
import { serve } from "@hono/node-server"
import { queue } from "./queue.ts"

const handler = process.env.HANDLER ?? "worker"
const port = Number(process.env.PORT ?? 3000)

const notFound = () => new Response(null, { status: 404 })
const atPath = (handle: (request: Request) => Response | Promise<Response>) => (request: Request) =>
  new URL(request.url).pathname === "/webhooks/opsplatform" && request.method === "POST" ? handle(request) : notFound()

const handlers: Record<string, () => Promise<(request: Request) => Response | Promise<Response>>> = {
  worker: async () => {
    const worker = (await import("./worker.ts")).default
    const env = { OPSPLATFORM_WEBHOOK_SECRET: process.env.OPSPLATFORM_WEBHOOK_SECRET!, QUEUE: { send: queue.push } }
    return atPath((request) => worker.fetch(request, env))
  },
  "public-key-worker": async () => {
    const worker = (await import("./publicKeyWorker.ts")).default
    const env = { OPSPLATFORM_WEBHOOK_PUBLIC_KEYS: process.env.OPSPLATFORM_WEBHOOK_PUBLIC_KEYS!, QUEUE: { send: queue.push } }
    return atPath((request) => worker.fetch(request, env))
  },
  next: async () => atPath((await import("./app/webhooks/opsplatform/route.ts")).POST),
  hono: async () => (await import("./hono.ts")).app.fetch
}

const load = handlers[handler]
if (load === undefined) throw new Error(`HANDLER must be one of ${Object.keys(handlers).join(", ")}, got '${handler}'`)
serve({ fetch: await load(), port, hostname: "127.0.0.1" }, () =>
  console.log(`receiving on http://127.0.0.1:${port}/webhooks/opsplatform (${handler})`))
