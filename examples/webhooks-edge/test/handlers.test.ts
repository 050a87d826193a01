import { createClient, type OpsplatformClient } from "@opsplatform/client"
import { type Process, type SendingPlatform, start, startSendingPlatform } from "@opsplatform/example-support"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

/** Each Fetch handler runs under Node's Web APIs (`node src/serve.ts`) and gets real deliveries from a running server. */
const exampleDir = fileURLToPath(new URL("..", import.meta.url))

let platform: SendingPlatform
let ops: OpsplatformClient
const running: Array<Process> = []

beforeAll(async () => {
  platform = await startSendingPlatform("Edge org")
  ops = createClient({ baseUrl: platform.server.url, token: platform.fixture.tokens.sandbox })
})
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()))
  await platform?.close()
})

describe.each(["worker", "next", "hono"])("the %s handler", (handler) => {
  it("verifies a delivery from the server from the Fetch Request, and refuses a forged or unsigned one", async () => {
    const { port, url, subscription } = await platform.subscribe(["invoice.paid"])
    const proc = start(process.execPath, ["src/serve.ts"], {
      cwd: exampleDir,
      env: { HANDLER: handler, PORT: String(port), OPSPLATFORM_WEBHOOK_SECRET: subscription.secret! }
    })
    running.push(proc)
    expect(await proc.waitFor(/receiving on/)).toContain(`(${handler})`)

    const ping = await ops.post("/v1/webhooks/{id}/test", { params: { path: { id: subscription.id } } })
    expect(await proc.waitFor(/^verified webhook\.test/, 30_000)).toBe(`verified webhook.test ${ping.event_id}`)
    await expect.poll(async () => (await ops.get("/v1/webhooks/{id}/deliveries", { params: { path: { id: subscription.id } } }))
      .map((d) => [d.status, d.last_status_code]), { timeout: 10_000 }).toEqual([["succeeded", 204]])

    const forged = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "webhook-id": "evt_x", "webhook-timestamp": String(Math.floor(Date.now() / 1000)), "webhook-signature": "v1,AAAA" },
      body: "{}"
    })
    expect(forged.status).toBe(400)
    expect(await forged.json()).toEqual({ code: "no_matching_signature" })
    const unsigned = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
    expect(await unsigned.json()).toEqual({ code: "missing_header" })
  })
})

describe("the public-key worker", () => {
  it("holding only whpk_ keys, verifies deliveries through a change of scheme from v1 to v1a and a later key rotation", async () => {
    const { port, url, subscription } = await platform.subscribe(["invoice.paid"])
    const path = { params: { path: { id: subscription.id } } }
    // v1 → v1a: for a day, deliveries carry a v1 entry (for receivers holding the secret) and a v1a entry.
    const toV1a = await ops.post("/v1/webhooks/{id}/rotate-secret", { ...path, body: { signing_scheme: "v1a" } })
    expect(toV1a).toMatchObject({ signing_scheme: "v1a", secret: null })
    const keys = async () => (await ops.get("/v1/webhooks/{id}/public-keys", path)).map((k) => k.public_key)
    expect(await keys()).toEqual([toV1a.public_key])
    const run = async (publicKeys: ReadonlyArray<string>) => {
      const proc = start(process.execPath, ["src/serve.ts"], {
        cwd: exampleDir,
        env: { HANDLER: "public-key-worker", PORT: String(port), OPSPLATFORM_WEBHOOK_PUBLIC_KEYS: publicKeys.join(" ") }
      })
      running.push(proc)
      await proc.waitFor(/receiving on/)
      return proc
    }
    const ping = async () => (await ops.post("/v1/webhooks/{id}/test", path)).event_id
    let proc = await run(await keys())
    const first = await ping()
    expect(await proc.waitFor(/^verified webhook\.test/, 30_000)).toBe(`verified webhook.test ${first}`)

    // Rotating the key again with no grace: the worker's key no longer verifies, the refreshed list does.
    await ops.post("/v1/webhooks/{id}/rotate-secret", { ...path, body: { signing_scheme: "v1a", grace_period_seconds: 0 } })
    const refused = await ping()
    await expect.poll(async () => (await ops.get("/v1/webhooks/{id}/deliveries", path)).find((d) => d.event_id === refused)?.last_status_code, {
      timeout: 30_000
    }).toBe(400)
    await proc.stop()
    proc = await run(await keys())
    const second = await ping()
    expect(await proc.waitFor(new RegExp(`^verified webhook\\.test ${second}`), 30_000)).toBe(`verified webhook.test ${second}`)

    const forged = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "webhook-id": "evt_x", "webhook-timestamp": String(Math.floor(Date.now() / 1000)), "webhook-signature": `v1a,${"A".repeat(86)}==` },
      body: "{}"
    })
    expect(await forged.json()).toEqual({ code: "no_matching_signature" })
  })
})
