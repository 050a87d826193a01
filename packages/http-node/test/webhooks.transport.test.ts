import { Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { WebhookTransport } from "@opsplatform/core"
import { NodeWebhookTransport } from "../src/server/webhookTransport.ts"
import { type Receiver, startReceiver } from "./support/receiver.ts"

const transport = NodeWebhookTransport()
// One transport for the whole file, as a worker keeps one: its agents (and their connections) live with it.
const runtime = ManagedRuntime.make(transport)
const run = <A, E>(effect: Effect.Effect<A, E, WebhookTransport.WebhookTransport>) => runtime.runPromise(Effect.result(effect))

const send = (url: string, allowPrivate: boolean, overrides: Partial<WebhookTransport.WebhookRequest> = {}) =>
  run(Effect.flatMap(WebhookTransport.WebhookTransport, (t) =>
    t.send({
      url,
      headers: { "content-type": "application/json" },
      body: new TextEncoder().encode("{}"),
      timeoutMs: 2_000,
      maxResponseBytes: 4096,
      allowPrivate,
      ...overrides
    })))

describe("the Node webhook transport", () => {
  let receiver: Receiver
  let port: string
  beforeAll(async () => {
    receiver = await startReceiver({ tls: false })
    port = new URL(receiver.url).port
  })
  afterAll(async () => {
    await runtime.dispose()
    await receiver.close()
  })

  it("refuses loopback destinations unless the operator allows private ones, by address and by name after DNS", async () => {
    for (const url of [`http://127.0.0.1:${port}/hooks`, `http://localhost:${port}/hooks`, `http://[::ffff:127.0.0.1]:${port}/hooks`]) {
      const refused = await send(url, false)
      expect(refused._tag, url).toBe("Failure")
      if (refused._tag === "Failure") expect(refused.failure.message).toMatch(/^Refused destination: .*loopback, private/)
    }
    expect(receiver.received).toHaveLength(0)
    const allowed = await send(`http://localhost:${port}/hooks`, true)
    expect(allowed._tag === "Success" && allowed.success.status).toBe(204)
    expect(receiver.received).toHaveLength(1)
  })

  it("resolves names for the subscription-time check", async () => {
    const resolved = await run(Effect.flatMap(WebhookTransport.WebhookTransport, (t) => t.resolve("localhost")))
    expect(resolved._tag === "Success" && resolved.success.some((a) => a === "127.0.0.1" || a === "::1")).toBe(true)
    const missing = await run(Effect.flatMap(WebhookTransport.WebhookTransport, (t) => t.resolve("nothing.invalid")))
    expect(missing._tag).toBe("Failure")
  })

  it("reuses kept-alive connections and reports connection failures plainly", async () => {
    receiver.answer = () => ({ status: 200, body: "fine" })
    for (let i = 0; i < 5; i++) {
      const res = await send(receiver.url, true)
      expect(res._tag === "Success" && res.success.body).toBe("fine")
    }
    expect(new Set(receiver.received.slice(-5).map((r) => r.remotePort)).size).toBe(1)
    const closed = await send("http://127.0.0.1:9/hooks", true)
    expect(closed._tag === "Failure" && closed.failure.message).toBe("Could not connect, or no answer within 2000 ms")
  })

  it("stops at the deadline and keeps only the first bytes of a long answer", async () => {
    receiver.answer = () => ({ status: 200, delayMs: 1_000 })
    const slow = await send(receiver.url, true, { timeoutMs: 200 })
    // A timeout reads as a refused connection: the text tells no port's state (issue 28, item 6).
    expect(slow._tag === "Failure" && slow.failure.message).toBe("Could not connect, or no answer within 200 ms")
    receiver.answer = () => ({ status: 500, body: "é".repeat(5_000) })
    const long = await send(receiver.url, true, { maxResponseBytes: 10 })
    expect(long._tag === "Success" && long.success.body).toBe("ééééé")
  })
})

// The transport layer closes its agents with its scope: a program using it exits without hanging.
describe("transport lifecycle", () => {
  it("builds and releases", async () => {
    await Effect.runPromise(Effect.scoped(Layer.build(transport)))
  })
})
