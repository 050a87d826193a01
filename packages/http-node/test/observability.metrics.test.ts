import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import type { Fixture } from "@opsplatform/testing"
import { testDatabases } from "./support/databases.ts"
import { prometheusFor } from "./support/prometheus.ts"
import { startReceiver, type Receiver } from "./support/receiver.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"
import { publishEvent, subscribe, useTestWebhookSettings } from "./support/webhooks.ts"

useTestWebhookSettings({ stepMs: 100, timeoutMs: 2_000 })

const prometheus = prometheusFor(inject("prometheus"))
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i

/** The value of the one series `promql` answers once it equals `expected` (Prometheus scrapes every second). */
const settlesAt = async (promql: string, expected: number) => {
  const samples = await prometheus.until(promql, (s) => s.length === 1 && s[0]!.value === expected)
  return samples[0]!.value
}

describe.each(testDatabases())("Prometheus scrapes the server's metrics ($name)", (db) => {
  let server: TestServer
  let f: Fixture
  let ok: Receiver
  let gone: Receiver
  let instance: string
  let target: { readonly forget: () => void }

  beforeAll(async () => {
    server = await startTestServer(db.choice(), { background: true, env: { OPSPLATFORM_METRICS_PORT: "0" } })
    f = await seedFixture(server)
    ok = await startReceiver({ tls: false })
    gone = await startReceiver({ tls: false })
    gone.answer = () => ({ status: 410 })
    instance = `metrics-${db.name}-${Date.now()}`
    target = prometheus.scrape(instance, server.metricsPort!)
  })
  afterAll(async () => {
    target?.forget()
    await server?.close()
    await ok?.close()
    await gone?.close()
  })

  it("serves /metrics on its own listener, in the exposition format, and not on the API's port", async () => {
    expect(server.metricsPort).toBeTypeOf("number")
    const response = await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("text/plain; version=0.0.4")
    expect(await response.text()).toContain("# TYPE opsplatform_db_pool_max_connections gauge")
    expect((await call(server, "GET", "/metrics")).status).toBe(404)
  })

  it("counts requests by route template, method and status: three 404s give status=\"404\" 3", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await call(server, "GET", `/v1/locations/${crypto.randomUUID()}`, { token: f.tokens.api })
      expect(res.status).toBe(404)
    }
    const selector = `instance="${instance}",route="/v1/locations/:id",method="GET"`
    expect(await settlesAt(`opsplatform_http_requests_total{${selector},status="404"}`, 3)).toBe(3)
    expect(await settlesAt(`opsplatform_http_request_duration_seconds_count{${selector}}`, 3)).toBe(3)
    expect(await settlesAt(`opsplatform_http_requests_in_flight{instance="${instance}"}`, 0)).toBe(0)
  })

  it("counts refusals by status, and labels a path no route serves `unmatched`", async () => {
    expect((await call(server, "GET", "/v1/locations")).status).toBe(401)
    expect((await call(server, "GET", "/v1/locations", { token: f.tokens.narrow })).status).toBe(403)
    expect((await call(server, "GET", `/nothing/here/${f.organizationId}`)).status).toBe(404)
    expect(await settlesAt(`opsplatform_http_refusals_total{instance="${instance}",status="401"}`, 1)).toBe(1)
    expect(await settlesAt(`opsplatform_http_refusals_total{instance="${instance}",status="403"}`, 1)).toBe(1)
    // This one and the first test's GET /metrics on the API's port.
    expect(await settlesAt(`opsplatform_http_requests_total{instance="${instance}",route="unmatched",method="GET",status="404"}`, 2)).toBe(2)
  })

  it("counts published events, attempts by outcome, and a subscription disabled by 410 Gone", async () => {
    await subscribe(server, f.tokens.sandbox, ok.url)
    await subscribe(server, f.tokens.sandbox, gone.url)
    await publishEvent(server, f.sandbox)
    await ok.until((r) => r.length === 1)
    await gone.until((r) => r.length === 1)
    const at = `instance="${instance}"`
    expect(await settlesAt(`opsplatform_outbox_events_published_total{${at},type="fleet_vehicle.created"}`, 1)).toBe(1)
    expect(await settlesAt(`opsplatform_webhook_attempts_total{${at},outcome="succeeded"}`, 1)).toBe(1)
    expect(await settlesAt(`opsplatform_webhook_attempts_total{${at},outcome="dead"}`, 1)).toBe(1)
    expect(await settlesAt(`opsplatform_webhook_subscriptions_disabled_total{${at}}`, 1)).toBe(1)
    expect(await settlesAt(`opsplatform_webhook_subscriptions_disabled{${at}}`, 1)).toBe(1)
    expect(await settlesAt(`opsplatform_webhook_first_attempt_delay_seconds_count{${at}}`, 2)).toBe(2)
    expect(await settlesAt(`opsplatform_webhook_oldest_due_age_seconds{${at}}`, 0)).toBe(0)
  })

  it("reads the backlogs from the database: a rolled-back event counts nothing", async () => {
    await publishEvent(server, f.sandbox, "fleet_vehicle.created", { rollBack: true })
    const at = `instance="${instance}"`
    expect(await settlesAt(`opsplatform_metering_records_waiting{${at}}`, 0)).toBe(0)
    expect(await settlesAt(`opsplatform_outbox_events_published_total{${at},type="fleet_vehicle.created"}`, 1)).toBe(1)
  })

  it("times each background job's pass and keeps its last success", async () => {
    const passes = await prometheus.until(
      `opsplatform_job_last_success_timestamp_seconds{instance="${instance}"}`,
      (s) => ["obligations", "fiscal", "mail", "pulse"].every((job) => s.some((x) => x.metric.name === job))
    )
    for (const pass of passes) expect(pass.value * 1000).toBeGreaterThan(Date.now() - 10 * 60_000)
  })

  it("carries no organization, token or id in any label", async () => {
    const series = await prometheus.query(`{instance="${instance}"}`)
    expect(series.length).toBeGreaterThan(20)
    const secrets = [f.organizationId, ...Object.values(f.tokens)]
    for (const s of series) {
      for (const value of Object.values(s.metric)) {
        expect(UUID.test(value), `${s.metric.__name__} carries ${value}`).toBe(false)
        for (const secret of secrets) expect(value).not.toContain(secret)
      }
    }
  })
})
