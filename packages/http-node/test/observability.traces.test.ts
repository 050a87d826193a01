import { Effect, Layer, Logger } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Fixture } from "@opsplatform/testing"
import { coreSettingsFrom } from "../src/config/Configuration.ts"
import { jsonLogger, withObservability } from "../src/server/observability.ts"
import { testDatabases } from "./support/databases.ts"
import { testConfiguration } from "./support/config.ts"
import { type ReceivedSpan, startOtlpReceiver } from "./support/otlpReceiver.ts"
import { startReceiver, type Receiver } from "./support/receiver.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"
import { publishEvent, subscribe, useTestWebhookSettings } from "./support/webhooks.ts"

useTestWebhookSettings({ stepMs: 100, timeoutMs: 2_000 })

const hex = (bytes: number) => Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("")

/** Whether `span` descends from `ancestor` within `spans`. */
const descends = (spans: ReadonlyArray<ReceivedSpan>, span: ReceivedSpan, ancestor: ReceivedSpan): boolean => {
  let parent = span.parentSpanId
  for (let hops = 0; parent !== undefined && hops < 50; hops++) {
    if (parent === ancestor.spanId) return true
    parent = spans.find((s) => s.spanId === parent)?.parentSpanId
  }
  return false
}

describe("the standard variables", () => {
  it("turn the export on with the endpoint alone, and off with OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED", () => {
    const traces = (env: Record<string, string>) => coreSettingsFrom(env).observability.traces
    expect(traces({})).toBeUndefined()
    expect(traces({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toMatchObject({
      url: "http://collector:4318/v1/traces",
      serviceName: "opsplatform"
    })
    expect(traces({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })?.url).toBe("http://collector:4318/v1/traces")
    expect(traces({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://b:9/traces" })?.url)
      .toBe("http://b:9/traces")
    expect(traces({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318", OTEL_TRACES_EXPORTER: "none" })).toBeUndefined()
    expect(traces({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318", OTEL_SDK_DISABLED: "true" })).toBeUndefined()
    expect(() => traces({ OTEL_TRACES_EXPORTER: "zipkin" })).toThrow("OTEL_TRACES_EXPORTER must be otlp or none")
    expect(() => traces({ OTEL_EXPORTER_OTLP_HEADERS: "api-key=s3cret,broken" })).toThrow("OTEL_EXPORTER_OTLP_HEADERS must be")
    expect(() => traces({ OTEL_EXPORTER_OTLP_HEADERS: "api-key=s3cret,broken" })).not.toThrow("s3cret")
  })
})

describe.each(testDatabases())("spans exported over OTLP/HTTP to a collector on loopback ($name)", (db) => {
  let collector: Awaited<ReturnType<typeof startOtlpReceiver>>
  let server: TestServer
  let f: Fixture
  let receiver: Receiver

  beforeAll(async () => {
    collector = await startOtlpReceiver()
    server = await startTestServer(db.choice(), {
      background: true,
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_SERVICE_NAME: "opsplatform-test",
        OTEL_EXPORTER_OTLP_HEADERS: "x-collector-key=test%20key"
      }
    })
    f = await seedFixture(server)
    receiver = await startReceiver({ tls: false })
  })
  afterAll(async () => {
    await server?.close()
    await collector?.close()
    await receiver?.close()
  })

  it("gives a request one server span under the caller's traceparent, with its route and status, and its SQL statements as children", async () => {
    const traceId = hex(16)
    const callerSpan = hex(8)
    const res = await call(server, "GET", "/v1/locations", {
      token: f.tokens.api,
      headers: { traceparent: `00-${traceId}-${callerSpan}-01` }
    })
    expect(res.status).toBe(200)
    const spans = await collector.trace(traceId, (s) =>
      s.some((x) => x.kind === 2) && s.some((x) => x.attributes["db.system.name"] === "postgresql"))
    const request = spans.filter((s) => s.kind === 2)
    expect(request).toHaveLength(1)
    const root = request[0]!
    expect(root.parentSpanId).toBe(callerSpan)
    expect(root.service).toBe("opsplatform-test")
    expect(root.attributes).toMatchObject({ "http.request.method": "GET", "http.route": "/v1/locations", "http.response.status_code": 200 })
    const statements = spans.filter((s) => s.attributes["db.system.name"] === "postgresql")
    expect(statements.length).toBeGreaterThan(0)
    for (const statement of statements) {
      expect(statement.kind).toBe(3)
      expect(descends(spans, statement, root), `${statement.name} under the request`).toBe(true)
      expect(String(statement.attributes["db.query.text"])).toMatch(/\b(SELECT|INSERT|UPDATE|WITH)\b/i)
      // The statement's text has placeholders, never the caller's values.
      expect(String(statement.attributes["db.query.text"])).not.toContain(f.organizationId)
    }
    expect(collector.requests.every((r) => r.headers["x-collector-key"] === "test key")).toBe(true)
  })

  it("traces a webhook send as a client span, and each job pass", async () => {
    await subscribe(server, f.tokens.sandbox, receiver.url)
    await publishEvent(server, f.sandbox)
    await receiver.until((r) => r.length === 1)
    const waitFor = async (accept: (s: ReceivedSpan) => boolean) => {
      const deadline = Date.now() + 30_000
      while (!collector.spans.some(accept)) {
        if (Date.now() > deadline) throw new Error(`no such span; names: ${[...new Set(collector.spans.map((s) => s.name))]}`)
        await new Promise((r) => setTimeout(r, 100))
      }
      return collector.spans.find(accept)!
    }
    const send = await waitFor((s) => s.name === "webhook.send")
    expect(send.kind).toBe(3)
    expect(send.attributes).toMatchObject({ "webhook.event_type": "fleet_vehicle.created", "webhook.attempt": 1, "http.response.status_code": 204 })
    const pass = await waitFor((s) => s.name === "job obligations")
    expect(pass.attributes["job.name"]).toBe("obligations")
    const passStatements = collector.spans.filter((s) => s.traceId === pass.traceId && s.attributes["db.system.name"] === "postgresql")
    expect(passStatements.length).toBeGreaterThan(0)
  })
})

describe("log lines", () => {
  it("carry the trace and span ids of their span while spans are exported, and none otherwise", async () => {
    const collector = await startOtlpReceiver()
    const lines: Array<string> = []
    const capture = Logger.map(jsonLogger, (line) => void lines.push(line))
    const logged = Effect.logInfo("inside").pipe(Effect.withSpan("outer"), Effect.provide(Logger.layer([capture])))
    try {
      await Effect.runPromise(Effect.scoped(Layer.build(Layer.effectDiscard(logged).pipe(
        withObservability,
        Layer.provide(testConfiguration({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url }))
      ))))
    } finally {
      await collector.close()
    }
    const traced = JSON.parse(lines[0]!)
    expect(traced.message).toBe("inside")
    expect(traced.traceId).toMatch(/^[0-9a-f]{32}$/)
    expect(traced.spanId).toMatch(/^[0-9a-f]{16}$/)

    await Effect.runPromise(logged)
    const untraced = JSON.parse(lines[1]!)
    expect(untraced.message).toBe("inside")
    expect(untraced.traceId).toBeUndefined()
  })
})
