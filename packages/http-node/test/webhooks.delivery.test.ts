import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createVerifier } from "@opsplatform/webhooks-verify"
import { Events, Tenancy } from "@opsplatform/core"
import { type Fixture, sampleStops } from "@opsplatform/testing"
import { testDatabases } from "./support/databases.ts"
import { receiverCertificateFile, type Receiver, startReceiver, verifyWith, verifyWithPublicKey } from "./support/receiver.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"
import { deliveriesOf, eventually, publishEvent, subscribe, useTestWebhookSettings } from "./support/webhooks.ts"

useTestWebhookSettings({ stepMs: 300, timeoutMs: 1_500, caFile: receiverCertificateFile })

const ofEvent = (eventId: string) => (received: ReadonlyArray<{ headers: Record<string, unknown> }>) =>
  received.filter((r) => r.headers["webhook-id"] === eventId)

for (const db of testDatabases()) {
  describe(`webhook delivery to a real receiver (${db.name})`, () => {
    let server: TestServer
    let f: Fixture
    const receivers: Array<Receiver> = []
    const receiver = async (tls = true) => {
      const r = await startReceiver({ tls })
      receivers.push(r)
      return r
    }

    beforeAll(async () => {
      server = await startTestServer(db.choice(), { background: true })
      f = await seedFixture(server)
    })
    afterAll(async () => {
      await server.close()
      await Promise.all(receivers.map((r) => r.close()))
    })

    const deliveryOf = async (subscriptionId: string, eventId: string) =>
      (await deliveriesOf(server, f.tokens.api, subscriptionId)).find((d) => d.event_id === eventId)

    it("retries a failed attempt and records both, every request signed and verifiable", async () => {
      const r = await receiver()
      r.answer = ({ n }) => (n === 1 ? { status: 500, body: "not yet" } : { status: 200, body: "ok" })
      const sub = await subscribe(server, f.tokens.api, r.url)
      r.secrets = [sub.secret]
      const eventId = await publishEvent(server, f.live)
      await r.until((all) => ofEvent(eventId)(all).length >= 2)
      const [first, second] = ofEvent(eventId)(r.received)
      expect(r.rejected).toEqual([])
      expect(first!.status).toBe(500)
      expect(second!.status).toBe(200)
      // Every attempt carries the same event id and the same bytes; the signature is fresh.
      expect(second!.body).toBe(first!.body)
      for (const got of [first!, second!]) {
        expect(got.headers["content-type"]).toBe("application/json")
        expect(got.headers["user-agent"]).toMatch(/^OpsPlatform-Webhooks\//)
        expect(got.headers["x-service-event"]).toBe("fleet_vehicle.created")
        expect(got.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/)
        expect(Math.abs(Number(got.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(30)
      }
      const body = JSON.parse(second!.body)
      expect(body).toEqual({
        id: eventId,
        type: "fleet_vehicle.created",
        created: expect.any(Number),
        environment: "live",
        data: { id: expect.any(String), plate: "B-101-OPS", organizationId: f.organizationId }
      })
      const delivery = await eventually(() => deliveryOf(sub.id, eventId), (d) => d?.status === "succeeded")
      expect(second!.headers["x-service-delivery"]).toBe(delivery.id)
      expect(delivery).toMatchObject({ attempt_count: 2, last_status_code: 200, next_attempt_at: null, last_error: null })
      expect(delivery.attempts.map((a: any) => [a.number, a.status_code])).toEqual([[2, 200], [1, 500]])
      const failed = delivery.attempts[1]
      expect(failed.response_body).toBe("not yet")
      expect(failed.duration_ms).toBeGreaterThanOrEqual(0)
      // The first attempt scheduled the second 300 ms ± 20 % after it ended.
      const waited = Date.parse(failed.next_attempt_at) - Date.parse(failed.attempted_at) - failed.duration_ms
      expect(waited).toBeGreaterThanOrEqual(240 - 2)
      expect(waited).toBeLessThanOrEqual(360 + 2)
    })

    it("marks a delivery dead after the budget of 8 attempts; redeliver resets it and force resends a success", async () => {
      const r = await receiver()
      r.answer = () => ({ status: 503 })
      const sub = await subscribe(server, f.tokens.api, r.url)
      r.secrets = [sub.secret]
      const eventId = await publishEvent(server, f.live)
      const dead = await eventually(() => deliveryOf(sub.id, eventId), (d) => d?.status === "dead")
      expect(ofEvent(eventId)(r.received)).toHaveLength(8)
      expect(dead).toMatchObject({ attempt_count: 8, last_status_code: 503, next_attempt_at: null })
      expect(dead.attempts).toHaveLength(8)
      expect(dead.attempts[0].next_attempt_at).toBeNull()

      r.answer = () => ({ status: 200 })
      const redeliver = await call(server, "POST", `/v1/webhooks/${sub.id}/deliveries/${dead.id}/redeliver`, {
        token: f.tokens.api,
        body: {}
      })
      expect(redeliver.status).toBe(200)
      expect(redeliver.text).toBe("")
      const succeeded = await eventually(() => deliveryOf(sub.id, eventId), (d) => d?.status === "succeeded")
      expect(succeeded.attempt_count).toBe(9)
      expect(ofEvent(eventId)(r.received).map((x) => x.headers["webhook-id"])).toEqual(Array(9).fill(eventId))

      const refused = await call(server, "POST", `/v1/webhooks/${sub.id}/deliveries/${dead.id}/redeliver`, {
        token: f.tokens.api,
        body: {}
      })
      expect(refused.status).toBe(409)
      expect(refused.json.error.code).toBe("conflict")
      const forced = await call(server, "POST", `/v1/webhooks/${sub.id}/deliveries/${dead.id}/redeliver`, {
        token: f.tokens.api,
        body: { force: true }
      })
      expect(forced.status).toBe(200)
      await r.until((all) => ofEvent(eventId)(all).length === 10)
      expect(r.rejected).toEqual([])
    })

    it("during rotation sends one signature per active secret, each verifying with its own secret", async () => {
      const r = await receiver()
      const sub = await subscribe(server, f.tokens.api, r.url)
      const rotated = await call(server, "POST", `/v1/webhooks/${sub.id}/rotate-secret`, { token: f.tokens.api, body: {} })
      expect(rotated.status).toBe(200)
      const next = rotated.json.data.secret as string
      expect(next).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      expect(next).not.toBe(sub.secret)
      const expires = Date.parse(rotated.json.data.previous_secret_expires_at)
      expect(Math.abs(expires - (Date.now() + 24 * 3600 * 1000))).toBeLessThan(60_000)
      r.secrets = [next]
      const eventId = await publishEvent(server, f.live)
      await r.until((all) => ofEvent(eventId)(all).length === 1)
      const got = ofEvent(eventId)(r.received)[0]!
      expect(String(got.headers["webhook-signature"]).split(" ")).toHaveLength(2)
      expect(verifyWith(sub.secret, got.headers, got.body)).toBe(true)
      expect(verifyWith(next, got.headers, got.body)).toBe(true)
      // The new secret alone verifies the new entry: strip the old one and it still passes.
      const newestOnly = String(got.headers["webhook-signature"]).split(" ")[0]!
      expect(verifyWith(next, { ...got.headers, "webhook-signature": newestOnly }, got.body)).toBe(true)
      expect(verifyWith(sub.secret, { ...got.headers, "webhook-signature": newestOnly }, got.body)).toBe(false)

      // Rotating with no grace retires every older secret at once.
      const now = await call(server, "POST", `/v1/webhooks/${sub.id}/rotate-secret`, {
        token: f.tokens.api,
        body: { grace_period_seconds: 0 }
      })
      const third = now.json.data.secret as string
      r.secrets = [third]
      const later = await publishEvent(server, f.live)
      await r.until((all) => ofEvent(later)(all).length === 1)
      const single = ofEvent(later)(r.received)[0]!
      expect(String(single.headers["webhook-signature"]).split(" ")).toHaveLength(1)
      expect(verifyWith(third, single.headers, single.body)).toBe(true)
      expect(verifyWith(next, single.headers, single.body)).toBe(false)
      expect(r.rejected).toEqual([])
    })

    it("through a rotation from v1 to v1a, a receiver holding only the whpk_ key verifies every delivery, and one holding the secret the overlap's", async () => {
      const r = await receiver()
      const sub = await subscribe(server, f.tokens.api, r.url)
      r.secrets = [sub.secret]
      const before = await publishEvent(server, f.live)
      await r.until((all) => ofEvent(before)(all).length === 1)
      expect(String(ofEvent(before)(r.received)[0]!.headers["webhook-signature"])).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)

      const rotated = await call(server, "POST", `/v1/webhooks/${sub.id}/rotate-secret`, { token: f.tokens.api, body: { signing_scheme: "v1a" } })
      expect(rotated.json.data).toMatchObject({ signing_scheme: "v1a", secret: null })
      const keys = await call(server, "GET", `/v1/webhooks/${sub.id}/public-keys`, { token: f.tokens.api })
      const publicKey = keys.json.data[0].public_key as string
      expect(publicKey).toBe(rotated.json.data.public_key)
      // The receiver now holds the public key alone: nothing that could sign a webhook.
      r.secrets = [publicKey]
      const during = await publishEvent(server, f.live)
      await r.until((all) => ofEvent(during)(all).length === 1)
      const overlap = ofEvent(during)(r.received)[0]!
      const [ed, hmac] = String(overlap.headers["webhook-signature"]).split(" ")
      expect(ed).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/)
      expect(hmac).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
      // Each kind of receiver checks its own entry only.
      expect(await verifyWithPublicKey(publicKey, { ...overlap.headers, "webhook-signature": ed! }, overlap.body)).toBe(true)
      expect(await verifyWithPublicKey(publicKey, { ...overlap.headers, "webhook-signature": hmac! }, overlap.body)).toBe(false)
      expect(verifyWith(sub.secret, overlap.headers, overlap.body)).toBe(true)
      expect(verifyWith(sub.secret, { ...overlap.headers, "webhook-signature": ed! }, overlap.body)).toBe(false)

      // The overlap ended by a rotation with no grace: v1a alone, under a key the receiver fetches again.
      const next = await call(server, "POST", `/v1/webhooks/${sub.id}/rotate-secret`, {
        token: f.tokens.api,
        body: { grace_period_seconds: 0 }
      })
      const refreshed = await call(server, "GET", `/v1/webhooks/${sub.id}/public-keys`, { token: f.tokens.api })
      expect(refreshed.json.data.map((k: any) => k.public_key)).toEqual([next.json.data.public_key])
      r.secrets = [next.json.data.public_key]
      const after = await publishEvent(server, f.live)
      await r.until((all) => ofEvent(after)(all).length === 1)
      const single = ofEvent(after)(r.received)[0]!
      expect(String(single.headers["webhook-signature"])).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/)
      expect(await verifyWithPublicKey(publicKey, single.headers, single.body)).toBe(false)
      expect(verifyWith(sub.secret, single.headers, single.body)).toBe(false)
      expect(r.rejected).toEqual([])
      const delivered = await eventually(() => deliveriesOf(server, f.tokens.api, sub.id), (all) => all.every((d) => d.status === "succeeded"))
      expect(delivered).toHaveLength(3)
    })

    it("a 410 disables the subscription: the delivery is dead and later events queue nothing for it", async () => {
      const gone = await receiver()
      gone.answer = () => ({ status: 410 })
      const control = await receiver()
      const sub = await subscribe(server, f.tokens.api, gone.url)
      const other = await subscribe(server, f.tokens.api, control.url)
      gone.secrets = [sub.secret]
      control.secrets = [other.secret]
      const eventId = await publishEvent(server, f.live)
      const disabled = await eventually(
        () => call(server, "GET", `/v1/webhooks/${sub.id}`, { token: f.tokens.api }),
        (res) => res.json.data.enabled === false
      )
      expect(disabled.json.data.disabled_reason).toBe("endpoint_gone")
      const delivery = await eventually(() => deliveryOf(sub.id, eventId), (d) => d?.status === "dead")
      expect(delivery.attempt_count).toBe(1)
      expect(delivery.last_error).toMatch(/410/)
      const later = await publishEvent(server, f.live)
      await control.until((all) => ofEvent(later)(all).length === 1)
      expect(await deliveryOf(sub.id, later)).toBeUndefined()
      expect(gone.received).toHaveLength(1)
      // A disabled subscription is neither tested nor redelivered until it is enabled again.
      const test = await call(server, "POST", `/v1/webhooks/${sub.id}/test`, { token: f.tokens.api })
      expect(test.status).toBe(409)
      const redeliver = await call(server, "POST", `/v1/webhooks/${sub.id}/deliveries/${delivery.id}/redeliver`, {
        token: f.tokens.api,
        body: {}
      })
      expect(redeliver.status).toBe(409)
    })

    it("a sandbox event never reaches a live subscription, and a live one never a sandbox subscription", async () => {
      const live = await receiver(true)
      const sandbox = await receiver(false)
      const liveSub = await subscribe(server, f.tokens.api, live.url)
      const sandboxSub = await subscribe(server, f.tokens.sandbox, sandbox.url)
      live.secrets = [liveSub.secret]
      sandbox.secrets = [sandboxSub.secret]
      const sandboxEvent = await publishEvent(server, f.sandbox)
      const liveEvent = await publishEvent(server, f.live)
      await sandbox.until((all) => ofEvent(sandboxEvent)(all).length === 1)
      await live.until((all) => ofEvent(liveEvent)(all).length === 1)
      expect(live.received.map((x) => x.headers["webhook-id"])).toEqual([liveEvent])
      expect(sandbox.received.map((x) => x.headers["webhook-id"])).toEqual([sandboxEvent])
      expect(JSON.parse(sandbox.received[0]!.body).environment).toBe("sandbox")
      expect((await deliveriesOf(server, f.tokens.api, liveSub.id)).map((d) => d.event_id)).toEqual([liveEvent])
    })

    it("a rolled-back change sends nothing; only subscribed types are delivered", async () => {
      const r = await receiver()
      const sub = await subscribe(server, f.tokens.api, r.url)
      r.secrets = [sub.secret]
      const rolledBack = await publishEvent(server, f.live, "fleet_vehicle.created", { rollBack: true })
      const otherType = await publishEvent(server, f.live, "fleet_vehicle.deleted")
      const committed = await publishEvent(server, f.live)
      await r.until((all) => ofEvent(committed)(all).length === 1)
      expect(r.received.map((x) => x.headers["webhook-id"])).toEqual([committed])
      const events = (await deliveriesOf(server, f.tokens.api, sub.id)).map((d) => d.event_id)
      expect(events).toEqual([committed])
      expect(events).not.toContain(rolledBack)
      expect(events).not.toContain(otherType)
    })

    it("a route dispatched through the API reaches its subscriber as delivery_route.dispatched", async () => {
      const r = await receiver()
      const sub = await subscribe(server, f.tokens.api, r.url, ["delivery_route.dispatched"])
      r.secrets = [sub.secret]
      const driverId = await server.run(Effect.gen(function*() {
        const tenancy = yield* Tenancy.Tenancy
        const driver = yield* tenancy.createUser({ email: `driver-${sub.id}@example.test`, name: "Dana Driver" })
        yield* tenancy.addMember(f.organizationId, driver.id, "driver")
        return driver.id
      }))
      const vehicle = await call(server, "POST", "/v1/fleet-vehicles", {
        token: f.tokens.api,
        body: { plate: "B 303 WHK", fuel_type: "diesel" }
      })
      expect(vehicle.status, vehicle.text).toBe(201)
      const vehicleId = vehicle.json.data.id
      const created = await call(server, "POST", "/v1/delivery-routes", {
        token: f.tokens.api,
        body: {
          name: "Webhook run",
          route_date: "2026-03-02T07:00:00+02:00",
          start_latitude: 44.4912,
          start_longitude: 26.1718,
          stops: sampleStops(2),
          driver_id: driverId,
          vehicle_id: vehicleId
        }
      })
      expect(created.status, created.text).toBe(201)
      const route = created.json.data
      await call(server, "POST", `/v1/delivery-routes/${route.id}/optimize`, { token: f.tokens.api })
      const dispatched = await call(server, "POST", `/v1/delivery-routes/${route.id}/dispatch`, { token: f.tokens.api })
      expect(dispatched.status, dispatched.text).toBe(200)
      const eventId = Events.routeDispatchedEventId(route.id, 1)
      await r.until((all) => ofEvent(eventId)(all).length === 1)
      const got = ofEvent(eventId)(r.received)[0]!
      const { event } = createVerifier(sub.secret).verify(got.body, got.headers)
      expect(event).toEqual({
        id: eventId,
        type: "delivery_route.dispatched",
        created: expect.any(Number),
        environment: "live",
        data: {
          id: route.id,
          number: route.number,
          driver_id: driverId,
          vehicle_id: vehicleId,
          stop_count: 2,
          dispatched_at: dispatched.json.data.dispatched_at,
          organizationId: f.organizationId
        }
      })
      expect(r.rejected).toEqual([])
    })

    it("the test ping goes to the subscription that asked for it only", async () => {
      const r = await receiver()
      const bystander = await receiver()
      const sub = await subscribe(server, f.tokens.api, r.url)
      const other = await subscribe(server, f.tokens.api, bystander.url)
      r.secrets = [sub.secret]
      bystander.secrets = [other.secret]
      const res = await call(server, "POST", `/v1/webhooks/${sub.id}/test`, { token: f.tokens.api })
      expect(res.status).toBe(202)
      expect(res.json.data.event_id).toMatch(/^evt_[0-9a-f]{32}$/)
      await r.until((all) => all.length === 1)
      const got = r.received[0]!
      expect(got.headers["x-service-delivery"]).toBe(res.json.data.delivery_id)
      expect(JSON.parse(got.body)).toMatchObject({
        id: res.json.data.event_id,
        type: "webhook.test",
        data: { subscription_id: sub.id, organizationId: f.organizationId }
      })
      const control = await publishEvent(server, f.live)
      await bystander.until((all) => ofEvent(control)(all).length === 1)
      expect(bystander.received.map((x) => x.headers["webhook-id"])).toEqual([control])
    })

    it("honours Retry-After on 429 within [delay, 2×delay]", async () => {
      const r = await receiver()
      r.answer = ({ n }) => (n === 1 ? { status: 429, headers: { "retry-after": "60" } } : { status: 204 })
      const sub = await subscribe(server, f.tokens.api, r.url)
      r.secrets = [sub.secret]
      const eventId = await publishEvent(server, f.live)
      const done = await eventually(() => deliveryOf(sub.id, eventId), (d) => d?.status === "succeeded")
      const first = done.attempts[1]
      const waited = Date.parse(first.next_attempt_at) - Date.parse(first.attempted_at) - first.duration_ms
      // 60 s asked; the planned 300 ms ± 20 % may stretch to twice itself, no more.
      expect(waited).toBeGreaterThanOrEqual(480 - 2)
      expect(waited).toBeLessThanOrEqual(720 + 2)
    })

    it("records timeouts, refused redirects and the first 4 KiB of an answer", async () => {
      const slow = await receiver()
      slow.answer = ({ n }) => (n === 1 ? { status: 200, delayMs: 2_500 } : { status: 200 })
      const redirect = await receiver()
      redirect.answer = ({ n }) => (n === 1 ? { status: 302, headers: { location: "https://example.com/" } } : { status: 200 })
      const chatty = await receiver()
      chatty.answer = ({ n }) => (n === 1 ? { status: 500, body: "x".repeat(10_000) } : { status: 200 })
      const subs = await Promise.all([slow, redirect, chatty].map(async (r) => {
        const s = await subscribe(server, f.tokens.api, r.url)
        r.secrets = [s.secret]
        return s
      }))
      const eventId = await publishEvent(server, f.live)
      const [timedOut, redirected, truncated] = await Promise.all(
        subs.map((s) => eventually(() => deliveryOf(s.id, eventId), (d) => d?.status === "succeeded"))
      )
      expect(timedOut.attempts[1]).toMatchObject({ status_code: null, error: "Could not connect, or no answer within 1500 ms" })
      expect(redirected.attempts[1].status_code).toBe(302)
      expect(redirected.attempts[1].error).toMatch(/Redirects are not followed/)
      expect(redirect.received.map((x) => x.status)).toEqual([302, 200])
      expect(truncated.attempts[1].response_body).toBe("x".repeat(4096))
    })
  })
}
