import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Events, SecretBox, WebhookSigning } from "@opsplatform/core"
import nacl from "tweetnacl"
import type { Fixture } from "@opsplatform/testing"
import { testDatabases } from "./support/databases.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"

// No worker runs here and private destinations stay refused (the test configuration sets nothing): this file is about the API itself.

const hook = "https://hooks.example.com/ops"

for (const db of testDatabases()) {
  describe(`/v1/webhooks over HTTP (${db.name})`, () => {
    let server: TestServer
    let f: Fixture
    beforeAll(async () => {
      server = await startTestServer(db.choice())
      f = await seedFixture(server)
    })
    afterAll(() => server.close())

    const create = (body: unknown, token = f.tokens.api) => call(server, "POST", "/v1/webhooks", { token, body })

    it("lists the subscribable event types with what makes each fire", async () => {
      const res = await call(server, "GET", "/v1/webhooks/events", { token: f.tokens.api })
      expect(res.status).toBe(200)
      const types = res.json.data.map((t: any) => t.type)
      expect(types).toEqual(Events.subscribableEventTypes)
      expect(types).toHaveLength(11)
      expect(types).not.toContain("webhook.test")
      for (const t of res.json.data) expect(t.description.length).toBeGreaterThan(10)
    })

    it("creates, reads, lists, updates and deletes a subscription; the secret is shown once", async () => {
      const created = await create({ url: hook, event_types: ["invoice.paid", "delivery_route.dispatched"], description: "ERP" })
      expect(created.status).toBe(201)
      const sub = created.json.data
      expect(sub).toMatchObject({
        url: hook,
        description: "ERP",
        event_types: ["invoice.paid", "delivery_route.dispatched"],
        enabled: true,
        disabled_reason: null,
        previous_secret_expires_at: null
      })
      expect(sub.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      const got = await call(server, "GET", `/v1/webhooks/${sub.id}`, { token: f.tokens.api })
      const { secret: _secret, ...withoutSecret } = sub
      expect(got.json).toEqual({ data: withoutSecret, error: null })
      const list = await call(server, "GET", "/v1/webhooks?perPage=100", { token: f.tokens.api })
      expect(list.json.data.map((s: any) => s.id)).toContain(sub.id)
      expect(list.text).not.toContain(sub.secret)

      const off = await call(server, "PATCH", `/v1/webhooks/${sub.id}`, {
        token: f.tokens.api,
        body: { enabled: false, event_types: ["invoice.credited"], description: null }
      })
      expect(off.json.data).toMatchObject({ enabled: false, disabled_reason: "by_request", event_types: ["invoice.credited"], description: null })
      const on = await call(server, "PATCH", `/v1/webhooks/${sub.id}`, { token: f.tokens.api, body: { enabled: true, url: "https://other.example.com/x" } })
      expect(on.json.data).toMatchObject({ enabled: true, disabled_reason: null, url: "https://other.example.com/x" })

      const removed = await call(server, "DELETE", `/v1/webhooks/${sub.id}`, { token: f.tokens.api })
      expect(removed.json).toEqual({ data: { id: sub.id, deleted: true }, error: null })
      expect((await call(server, "GET", `/v1/webhooks/${sub.id}`, { token: f.tokens.api })).status).toBe(404)
      expect((await call(server, "DELETE", `/v1/webhooks/${sub.id}`, { token: f.tokens.api })).status).toBe(404)
    })

    it("keeps the signing secret sealed at rest, even in a remembered idempotent response", async () => {
      const createKey = `create-${f.organizationId}`
      const created = await call(server, "POST", "/v1/webhooks", {
        token: f.tokens.api,
        body: { url: hook, event_types: ["invoice.paid"] },
        headers: { "idempotency-key": createKey }
      })
      const replay = await call(server, "POST", "/v1/webhooks", {
        token: f.tokens.api,
        body: { url: hook, event_types: ["invoice.paid"] },
        headers: { "idempotency-key": createKey }
      })
      expect(replay.status).toBe(201)
      expect(replay.headers.get("idempotent-replayed")).toBe("true")
      expect(replay.json.data).toEqual(created.json.data)
      const keyed = `rotate-${created.json.data.id}`
      const rotated = await call(server, "POST", `/v1/webhooks/${created.json.data.id}/rotate-secret`, {
        token: f.tokens.api,
        body: {},
        headers: { "idempotency-key": keyed }
      })
      const again = await call(server, "POST", `/v1/webhooks/${created.json.data.id}/rotate-secret`, {
        token: f.tokens.api,
        body: {},
        headers: { "idempotency-key": keyed }
      })
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      expect(again.json.data.secret).toBe(rotated.json.data.secret)
      const secrets = [created.json.data.secret, rotated.json.data.secret]
      const stored = await server.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const sealed = yield* sql`SELECT sealed AS text FROM webhook_secrets WHERE subscription_id = ${created.json.data.id}`
        const remembered = yield* sql`SELECT body AS text FROM idempotency_keys WHERE key IN (${createKey}, ${keyed})`
        return [...sealed, ...remembered].map((r: any) => String(r.text))
      }))
      expect(stored).toHaveLength(4)
      for (const text of stored) for (const secret of secrets) expect(text).not.toContain(secret.slice("whsec_".length))
    })

    it("refuses bad subscriptions with a detail per field", async () => {
      const missing = await create({})
      expect(missing.status).toBe(400)
      expect(missing.json.error.details.map((d: any) => d.field).sort()).toEqual(["event_types", "url"])
      const badTypes = await create({ url: hook, event_types: ["invoice.paid", "invoice.paid", "webhook.test", "nope"] })
      expect(badTypes.status).toBe(400)
      expect(badTypes.json.error.code).toBe("validation_failed")
      expect(badTypes.json.error.details.every((d: any) => d.field.startsWith("event_types"))).toBe(true)
      expect((await create({ url: hook, event_types: [] })).json.error.details[0].field).toBe("event_types")
      expect((await create({ url: hook, event_types: ["invoice.paid"], description: "x".repeat(501) })).status).toBe(400)
      expect((await create({ url: hook, event_types: ["invoice.paid"], secret: "whsec_mine" })).status).toBe(400)
      for (
        const [url, issue] of [
          ["http://hooks.example.com/", "https in the live environment"],
          ["https://127.0.0.1/", "loopback, private"],
          ["https://10.0.0.8/hook", "loopback, private"],
          ["https://[::1]/", "loopback, private"],
          ["https://localhost:8443/", "local host name"],
          ["https://169.254.169.254/latest/meta-data", "loopback, private"],
          ["https://u:p@hooks.example.com/", "user name or password"],
          ["not a url", "absolute URL"]
        ]
      ) {
        const res = await create({ url, event_types: ["invoice.paid"] })
        expect(res.status, url).toBe(400)
        expect(res.json.error.details, url).toEqual([{ field: "url", issue: expect.stringContaining(issue) }])
      }
      // Plain http is for the sandbox.
      expect((await create({ url: "http://hooks.example.com/", event_types: ["invoice.paid"] }, f.tokens.sandbox)).status).toBe(201)
      const sub = (await create({ url: hook, event_types: ["invoice.paid"] })).json.data
      const badUpdate = await call(server, "PATCH", `/v1/webhooks/${sub.id}`, { token: f.tokens.api, body: { url: "https://10.0.0.1/" } })
      expect(badUpdate.status).toBe(400)
      expect((await call(server, "GET", `/v1/webhooks/${sub.id}`, { token: f.tokens.api })).json.data.url).toBe(hook)
    })

    it("answers 400 for a malformed id and 404 for a well-formed one that names nothing", async () => {
      for (const path of ["/v1/webhooks/nope", "/v1/webhooks/nope/deliveries"]) {
        const res = await call(server, "GET", path, { token: f.tokens.api })
        expect(res.status, path).toBe(400)
        expect(res.json.error.details).toEqual([{ field: "id", issue: expect.any(String) }])
      }
      const unknown = await call(server, "GET", "/v1/webhooks/00000000-0000-4000-8000-00000000dead", { token: f.tokens.api })
      expect([unknown.status, unknown.json.error.code]).toEqual([404, "not_found"])
      const sub = (await create({ url: hook, event_types: ["invoice.paid"] })).json.data
      const res = await call(server, "POST", `/v1/webhooks/${sub.id}/deliveries/00000000-0000-4000-8000-00000000dead/redeliver`, {
        token: f.tokens.api,
        body: {}
      })
      expect(res.status).toBe(404)
    })

    it("rotates the secret with a grace period the caller may shorten", async () => {
      const sub = (await create({ url: hook, event_types: ["invoice.paid"] })).json.data
      const before = Date.now()
      const rotated = await call(server, "POST", `/v1/webhooks/${sub.id}/rotate-secret`, { token: f.tokens.api, body: {} })
      expect(rotated.status).toBe(200)
      expect(rotated.json.data.secret).not.toBe(sub.secret)
      const expiry = Date.parse(rotated.json.data.previous_secret_expires_at)
      expect(expiry - before).toBeGreaterThanOrEqual(24 * 3600 * 1000 - 1000)
      expect(expiry - before).toBeLessThanOrEqual(24 * 3600 * 1000 + 60_000)
      const short = await call(server, "POST", `/v1/webhooks/${sub.id}/rotate-secret`, { token: f.tokens.api, body: { grace_period_seconds: 600 } })
      expect(Date.parse(short.json.data.previous_secret_expires_at) - Date.now()).toBeLessThanOrEqual(600 * 1000)
      const got = await call(server, "GET", `/v1/webhooks/${sub.id}`, { token: f.tokens.api })
      expect(got.json.data.previous_secret_expires_at).toBe(short.json.data.previous_secret_expires_at)
      for (const grace of [-1, 1.5, 8 * 24 * 3600, "soon"]) {
        const bad = await call(server, "POST", `/v1/webhooks/${sub.id}/rotate-secret`, { token: f.tokens.api, body: { grace_period_seconds: grace } })
        expect(bad.status, String(grace)).toBe(400)
      }
    })

    it("signs with v1a when asked: the public key is shown and listed, the private key never leaves, and a change of scheme rotates", async () => {
      const created = await create({ url: hook, event_types: ["invoice.paid"], signing_scheme: "v1a" })
      expect(created.status).toBe(201)
      const sub = created.json.data
      expect(sub).toMatchObject({ signing_scheme: "v1a", secret: null, previous_secret_expires_at: null })
      expect(sub.public_key).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/)
      expect(created.text).not.toContain("whsk_")
      const got = await call(server, "GET", `/v1/webhooks/${sub.id}`, { token: f.tokens.api })
      expect(got.json.data).toMatchObject({ signing_scheme: "v1a", public_key: sub.public_key })
      const keys = await call(server, "GET", `/v1/webhooks/${sub.id}/public-keys`, { token: f.tokens.api })
      expect(keys.status).toBe(200)
      expect(keys.json.data).toEqual([{ id: expect.any(String), public_key: sub.public_key, created_at: sub.created_at, expires_at: null }])
      // The private key is sealed at rest: only its public half is stored in the clear.
      const stored = await server.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ scheme: string; sealed: string; public_key: string | null }>`SELECT scheme, sealed, public_key
          FROM webhook_secrets WHERE subscription_id = ${sub.id}`
      }))
      expect(stored).toEqual([{ scheme: "v1a", sealed: expect.stringMatching(/^v1\.[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]+$/), public_key: sub.public_key }])
      // Opened with the operator key, it is the whsk_ private key of that public key (seed and public key, as TweetNaCl holds them).
      const opened = await server.run(Effect.flatMap(SecretBox.SecretBox, (box) =>
        box.open(stored[0]!.sealed, WebhookSigning.secretContext(keys.json.data[0].id))))
      expect(opened).toMatch(/^whsk_[A-Za-z0-9+/]{86}==$/)
      const pair = nacl.sign.keyPair.fromSeed(Buffer.from(opened.slice(5), "base64").subarray(0, 32))
      expect(`whpk_${Buffer.from(pair.publicKey).toString("base64")}`).toBe(sub.public_key)
      expect(`whsk_${Buffer.from(pair.secretKey).toString("base64")}`).toBe(opened)
      expect(stored[0]!.sealed).not.toContain(opened.slice(5, 30))

      // To v1: a whsec_ secret shown once; the v1a key stays listed until the overlap ends.
      const toV1 = await call(server, "POST", `/v1/webhooks/${sub.id}/rotate-secret`, { token: f.tokens.api, body: { signing_scheme: "v1" } })
      expect(toV1.status).toBe(200)
      expect(toV1.json.data).toMatchObject({ signing_scheme: "v1", public_key: null })
      expect(toV1.json.data.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      const during = await call(server, "GET", `/v1/webhooks/${sub.id}/public-keys`, { token: f.tokens.api })
      expect(during.json.data).toEqual([{ ...keys.json.data[0], expires_at: toV1.json.data.previous_secret_expires_at }])
      // Rotating without a scheme keeps the current one.
      const again = await call(server, "POST", `/v1/webhooks/${sub.id}/rotate-secret`, { token: f.tokens.api, body: {} })
      expect(again.json.data.signing_scheme).toBe("v1")
      // Back to v1a with no grace: only the new key is left.
      const toV1a = await call(server, "POST", `/v1/webhooks/${sub.id}/rotate-secret`, {
        token: f.tokens.api,
        body: { signing_scheme: "v1a", grace_period_seconds: 0 }
      })
      expect(toV1a.json.data).toMatchObject({ signing_scheme: "v1a", secret: null })
      expect(toV1a.json.data.public_key).not.toBe(sub.public_key)
      const after = await call(server, "GET", `/v1/webhooks/${sub.id}/public-keys`, { token: f.tokens.api })
      expect(after.json.data.map((k: any) => [k.public_key, k.expires_at])).toEqual([[toV1a.json.data.public_key, null]])

      // A v1 subscription has no public keys; the scheme is a rotation's, not an update's.
      const plain = (await create({ url: hook, event_types: ["invoice.paid"] })).json.data
      expect(plain).toMatchObject({ signing_scheme: "v1", public_key: null })
      expect((await call(server, "GET", `/v1/webhooks/${plain.id}/public-keys`, { token: f.tokens.api })).json.data).toEqual([])
      const patched = await call(server, "PATCH", `/v1/webhooks/${plain.id}`, { token: f.tokens.api, body: { signing_scheme: "v1a" } })
      expect(patched.status).toBe(400)
      expect(patched.json.error.code).toBe("validation_failed")
      for (const bad of ["v2", "ed25519", 1]) {
        const res = await create({ url: hook, event_types: ["invoice.paid"], signing_scheme: bad })
        expect(res.status, String(bad)).toBe(400)
        expect(res.json.error.details.map((d: any) => d.field)).toEqual(["signing_scheme"])
      }
      // Another environment's or organization's subscription is not found.
      expect((await call(server, "GET", `/v1/webhooks/${sub.id}/public-keys`, { token: f.tokens.sandbox })).status).toBe(404)
      const stranger = await seedFixture(server)
      expect((await call(server, "GET", `/v1/webhooks/${sub.id}/public-keys`, { token: stranger.tokens.api })).status).toBe(404)
    })

    it("lists deliveries with a status filter and pages, shows one with its attempts, and redelivers by the rules", async () => {
      const sub = (await create({ url: hook, event_types: ["invoice.paid"] })).json.data
      const pings = []
      for (let i = 0; i < 3; i++) {
        const res = await call(server, "POST", `/v1/webhooks/${sub.id}/test`, { token: f.tokens.api })
        expect(res.status).toBe(202)
        pings.push(res.json.data)
      }
      const list = await call(server, "GET", `/v1/webhooks/${sub.id}/deliveries?perPage=2`, { token: f.tokens.api })
      expect(list.status).toBe(200)
      expect(list.json.meta).toMatchObject({ page: 1, perPage: 2, total: 3, totalPages: 2 })
      expect(list.json.data.map((d: any) => d.id)).toEqual([pings[2].delivery_id, pings[1].delivery_id])
      const rest = await call(server, "GET", `/v1/webhooks/${sub.id}/deliveries?perPage=2&cursor=${list.json.meta.nextCursor}`, { token: f.tokens.api })
      expect(rest.json.data.map((d: any) => d.id)).toEqual([pings[0].delivery_id])
      const delivery = list.json.data[0]
      expect(delivery).toMatchObject({
        subscription_id: sub.id,
        event_id: pings[2].event_id,
        event_type: "webhook.test",
        status: "pending",
        attempt_count: 0,
        last_attempt_at: null,
        last_status_code: null,
        last_error: null,
        attempts: []
      })
      expect(typeof delivery.next_attempt_at).toBe("string")
      expect((await call(server, "GET", `/v1/webhooks/${sub.id}/deliveries?status=pending`, { token: f.tokens.api })).json.meta.total).toBe(3)
      expect((await call(server, "GET", `/v1/webhooks/${sub.id}/deliveries?status=dead`, { token: f.tokens.api })).json.meta.total).toBe(0)
      const badStatus = await call(server, "GET", `/v1/webhooks/${sub.id}/deliveries?status=lost`, { token: f.tokens.api })
      expect(badStatus.status).toBe(400)
      expect(badStatus.json.error.details[0].field).toBe("status")
      const one = await call(server, "GET", `/v1/webhooks/${sub.id}/deliveries/${delivery.id}`, { token: f.tokens.api })
      expect(one.json.data).toEqual(delivery)
      const attempts = await call(server, "GET", `/v1/webhooks/${sub.id}/deliveries/${delivery.id}/attempts`, { token: f.tokens.api })
      expect(attempts.json).toMatchObject({ data: [], meta: { total: 0 } })
      // Another subscription's delivery is not found under this one.
      const other = (await create({ url: hook, event_types: ["invoice.paid"] })).json.data
      expect((await call(server, "GET", `/v1/webhooks/${other.id}/deliveries/${delivery.id}`, { token: f.tokens.api })).status).toBe(404)

      // Pending: redeliver just makes it due now, with or without a body.
      const pending = await call(server, "POST", `/v1/webhooks/${sub.id}/deliveries/${delivery.id}/redeliver`, { token: f.tokens.api })
      expect(pending.status, pending.text).toBe(200)
      expect(pending.text).toBe("")
      // In flight: refused until the attempt is recorded.
      await server.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE webhook_deliveries SET status = 'sending', locked_until = now() + interval '1 minute'
          WHERE id = ${delivery.id}`
      }))
      const sending = await call(server, "POST", `/v1/webhooks/${sub.id}/deliveries/${delivery.id}/redeliver`, { token: f.tokens.api, body: { force: true } })
      expect(sending.status).toBe(409)
      expect(sending.json.error.message).toMatch(/in flight/)
      const unknownField = await call(server, "POST", `/v1/webhooks/${sub.id}/deliveries/${delivery.id}/redeliver`, {
        token: f.tokens.api,
        body: { forced: true }
      })
      expect(unknownField.status).toBe(400)
    })
  })
}
