import { createClient, type OpsplatformClient } from "@opsplatform/client"
import { freePort, type Process, type SendingPlatform, start, startSendingPlatform } from "@opsplatform/example-support"
import { generateSecret } from "@opsplatform/webhooks-verify"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

/** Each receiver runs as `node src/<file>.ts` does, and gets real deliveries from a running server. */
const exampleDir = fileURLToPath(new URL("..", import.meta.url))

let platform: SendingPlatform
let ops: OpsplatformClient
const running: Array<Process> = []

beforeAll(async () => {
  platform = await startSendingPlatform("Receiver org")
  ops = createClient({ baseUrl: platform.server.url, token: platform.fixture.tokens.sandbox })
})
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()))
  await platform?.close()
})

const receiver = async (file: string, secret: string, port: number) => {
  const proc = start(process.execPath, [file], { cwd: exampleDir, env: { PORT: String(port), OPSPLATFORM_WEBHOOK_SECRET: secret } })
  running.push(proc)
  await proc.waitFor(/receiving on http:\/\/127\.0\.0\.1:\d+\/webhooks\/opsplatform/)
  return proc
}

const subscribe = (eventTypes: Array<string>) => platform.subscribe(eventTypes)

describe.each(["src/express.ts", "src/fastify.ts", "src/standardwebhooks.ts", "src/node-http.ts"])("%s", (file) => {
  it("verifies a delivery from the server on the raw body, and refuses a forged one", async () => {
    const { port, url, subscription } = await subscribe(["invoice.paid"])
    const proc = await receiver(file, subscription.secret!, port)

    const ping = await ops.post("/v1/webhooks/{id}/test", { params: { path: { id: subscription.id } } })
    const line = await proc.waitFor(/^verified webhook\.test evt_[0-9a-f]{32}$/, 30_000)
    expect(line).toContain(ping.event_id)

    const forged = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "webhook-id": "evt_x", "webhook-timestamp": String(Math.floor(Date.now() / 1000)), "webhook-signature": "v1,AAAA" },
      body: JSON.stringify({ id: "evt_x", type: "webhook.test", created: 0, environment: "sandbox", data: {} })
    })
    expect(forged.status).toBe(400)
    expect(await forged.json()).toEqual({ code: "no_matching_signature" })

    await expect.poll(async () => (await ops.get("/v1/webhooks/{id}/deliveries", { params: { path: { id: subscription.id } } }))
      .map((d) => [d.status, d.last_status_code]), { timeout: 10_000 }).toEqual([["succeeded", 204]])
  })
})

it("src/public-key.ts: holding only whpk_ keys, verifies deliveries through a change of scheme from v1 to v1a", async () => {
  const { port, subscription } = await subscribe(["invoice.paid"])
  const path = { params: { path: { id: subscription.id } } }
  const toV1a = await ops.post("/v1/webhooks/{id}/rotate-secret", { ...path, body: { signing_scheme: "v1a" } })
  const keys = async () => (await ops.get("/v1/webhooks/{id}/public-keys", path)).map((k) => k.public_key).join(" ")
  expect(await keys()).toBe(toV1a.public_key)
  const run = async () => {
    const proc = start(process.execPath, ["src/public-key.ts"], { cwd: exampleDir, env: { PORT: String(port), OPSPLATFORM_WEBHOOK_PUBLIC_KEYS: await keys() } })
    running.push(proc)
    await proc.waitFor(/receiving on/)
    return proc
  }
  let proc = await run()
  // During the overlap each delivery carries a v1 and a v1a entry; this receiver checks the v1a one.
  const during = await ops.post("/v1/webhooks/{id}/test", path)
  expect(await proc.waitFor(/^verified webhook\.test/, 30_000)).toBe(`verified webhook.test ${during.event_id}`)
  // The overlap cut short by a further rotation: the receiver refreshes its keys and verifies v1a alone.
  await ops.post("/v1/webhooks/{id}/rotate-secret", { ...path, body: { grace_period_seconds: 0 } })
  await proc.stop()
  proc = await run()
  const after = await ops.post("/v1/webhooks/{id}/test", path)
  expect(await proc.waitFor(new RegExp(`^verified webhook\\.test ${after.event_id}`), 30_000)).toBeDefined()
  await expect.poll(async () => (await ops.get("/v1/webhooks/{id}/deliveries", path)).map((d) => [d.status, d.last_status_code]), {
    timeout: 10_000
  }).toEqual([["succeeded", 204], ["succeeded", 204]])
})

it("src/express.ts: a paid invoice arrives typed by its event type", async () => {
  const { port, subscription } = await subscribe(["invoice.paid"])
  const proc = await receiver("src/express.ts", subscription.secret!, port)
  const contact = await ops.post("/v1/contacts", { body: { name: "Client SRL", kind: "customer" } })
  const invoice = await ops.post("/v1/invoices", {
    body: { contact_id: contact.id, currency: "RON", lines: [{ description: "Consulting", quantity: "10", unit_price: "100", vat_rate: 21 }] }
  })
  await ops.post("/v1/invoices/{id}/issue", { params: { path: { id: invoice.id } }, body: { series: "FCT" } })
  await ops.post("/v1/invoices/{id}/mark-paid", { params: { path: { id: invoice.id } }, body: { method: "CARD" } })
  expect(await proc.waitFor(/^verified invoice\.paid/, 30_000)).toBe(`verified invoice.paid: invoice ${invoice.id}, 1210.00 paid`)
})

it("src/send-test.ts signs a delivery the way the platform does, to test a receiver without one", async () => {
  const secret = generateSecret()
  const port = await freePort()
  const proc = await receiver("src/express.ts", secret, port)
  const sender = start(process.execPath, ["src/send-test.ts"], {
    cwd: exampleDir,
    env: { OPSPLATFORM_WEBHOOK_SECRET: secret, RECEIVER: `http://127.0.0.1:${port}/webhooks/opsplatform` }
  })
  running.push(sender)
  expect(await sender.waitFor(/answered/)).toBe(`http://127.0.0.1:${port}/webhooks/opsplatform answered 204`)
  expect(await proc.waitFor(/^verified webhook\.test evt_test_1$/)).toBeDefined()
})
