import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Fixture } from "@opsplatform/testing"
import { testDatabases } from "./support/databases.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"

/**
 * Issue 28, items 3 and 7: the caps a tenant meets (subscriptions and
 * mailboxes per environment, test sends and redeliveries per minute) and the
 * hashing pool's refusal, each with its envelope and `Retry-After`. The caps
 * are set low here so the edges are cheap to reach.
 */
for (const db of testDatabases()) {
  describe(`caps and the hashing pool answer in the envelope (${db.name})`, () => {
    let server: TestServer
    beforeAll(async () => {
      server = await startTestServer(db.choice(), {
        env: {
          OPSPLATFORM_WEBHOOKS_MAX_SUBSCRIPTIONS: "3",
          OPSPLATFORM_WEBHOOKS_TESTS_PER_MIN: "2",
          OPSPLATFORM_WEBHOOKS_REDELIVERIES_PER_MIN: "2",
          OPSPLATFORM_MAIL_MAX_MAILBOXES: "2",
          OPSPLATFORM_HASH_CONCURRENCY: "1",
          OPSPLATFORM_HASH_QUEUE: "0"
        }
      })
    })
    afterAll(() => server.close())

    const subscribe = (f: Fixture, n: number) =>
      call(server, "POST", "/v1/webhooks", { token: f.tokens.api, body: { url: `https://hooks-${n}.example.com/in`, event_types: ["invoice.paid"] } })

    it("webhook subscriptions stop at the cap with 409, even when created all at once, and the sandbox has its own", async () => {
      const f = await seedFixture(server)
      const all = await Promise.all(Array.from({ length: 6 }, (_, i) => subscribe(f, i)))
      expect(all.map((r) => r.status).sort()).toEqual([201, 201, 201, 409, 409, 409])
      const refused = all.find((r) => r.status === 409)!
      expect(refused.json.error).toMatchObject({ code: "conflict", requestId: refused.headers.get("x-request-id") })
      expect(refused.json.error.message).toMatch(/3 webhook subscriptions, the most/)
      const listed = await call(server, "GET", "/v1/webhooks", { token: f.tokens.api })
      expect(listed.json.meta.total).toBe(3)
      const sandbox = await call(server, "POST", "/v1/webhooks", {
        token: f.tokens.sandbox,
        body: { url: "https://hooks.example.com/in", event_types: ["invoice.paid"] }
      })
      expect(sandbox.status).toBe(201)
      // Deleting one makes room again.
      const removed = await call(server, "DELETE", `/v1/webhooks/${listed.json.data[0].id}`, { token: f.tokens.api })
      expect(removed.status).toBe(200)
      expect((await subscribe(f, 9)).status).toBe(201)
    })

    it("test sends and redeliveries past their rate answer 429 with Retry-After", async () => {
      const f = await seedFixture(server)
      const id = (await subscribe(f, 1)).json.data.id
      const tests = []
      for (let i = 0; i < 3; i++) tests.push(await call(server, "POST", `/v1/webhooks/${id}/test`, { token: f.tokens.api }))
      expect(tests.map((r) => r.status)).toEqual([202, 202, 429])
      expect(tests[2]!.json.error).toMatchObject({ code: "rate_limited" })
      expect(tests[2]!.json.error.retryAfterSec).toBeGreaterThan(0)
      expect(Number(tests[2]!.headers.get("retry-after"))).toBe(tests[2]!.json.error.retryAfterSec)
      const deliveryId = tests[0]!.json.data.delivery_id
      const redeliveries = []
      for (let i = 0; i < 3; i++) {
        redeliveries.push(await call(server, "POST", `/v1/webhooks/${id}/deliveries/${deliveryId}/redeliver`, { token: f.tokens.api, body: { force: true } }))
      }
      expect(redeliveries[2]!.status).toBe(429)
      expect(redeliveries[2]!.json.error.code).toBe("rate_limited")
      expect(redeliveries[2]!.headers.get("retry-after")).not.toBeNull()
      // Per organization environment: another organization is not held back.
      const g = await seedFixture(server)
      const theirs = (await subscribe(g, 1)).json.data.id
      expect((await call(server, "POST", `/v1/webhooks/${theirs}/test`, { token: g.tokens.api })).status).toBe(202)
    })

    it("mailboxes stop at the cap with 409", async () => {
      const f = await seedFixture(server)
      const create = (n: number) =>
        call(server, "POST", "/v1/mailboxes", {
          token: f.tokens.sandbox,
          body: { address: `box-${n}@firm.example`, imap: { host: "imap.example.com", username: `u${n}`, password: "secret-pw" } }
        })
      const all = await Promise.all(Array.from({ length: 4 }, (_, i) => create(i)))
      expect(all.map((r) => r.status).sort()).toEqual([201, 201, 409, 409])
      expect(all.find((r) => r.status === 409)!.json.error.message).toMatch(/2 mailboxes, the most/)
    })

    it("PINs past the hashing pool answer 503 unavailable with Retry-After, and are not half-written", async () => {
      const f = await seedFixture(server)
      const device = await call(server, "POST", "/v1/display/devices", { token: f.tokens.api, body: { name: "Front desk" } })
      const id = device.json.data.device.id
      // One derivation at a time and none waiting: of PINs set together, those that find the pool busy are refused.
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) => call(server, "PUT", `/v1/display/devices/${id}/pin`, { token: f.tokens.api, body: { pin: `48291${i % 10}` } }))
      )
      const busy = answers.filter((r) => r.status === 503)
      expect(answers.every((r) => r.status === 200 || r.status === 503)).toBe(true)
      expect(busy.length).toBeGreaterThan(0)
      expect(answers.some((r) => r.status === 200)).toBe(true)
      expect(busy[0]!.json.error).toMatchObject({ code: "unavailable", retryAfterSec: 1 })
      expect(busy[0]!.headers.get("retry-after")).toBe("1")
      const after = await call(server, "GET", `/v1/display/devices/${id}`, { token: f.tokens.api })
      expect(after.json.data.pin_set).toBe(true)
    })
  })
}
