import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { makeFixture } from "@opsplatform/testing"
import { ApiTestLayer, call, client, expectNotFound, invalidFields, outsiders } from "../support/api.ts"

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0)
const DAY = 24 * 3600 * 1000
const iso = (ms: number) => new Date(ms).toISOString()

/** A fixture with a customer contact and an active subscription, at NOW. */
const setup = Effect.gen(function*() {
  yield* TestClock.setTime(NOW)
  const f = yield* makeFixture()
  const api = yield* client(f.tokens.api)
  const contact = (yield* api.contacts.create({ payload: { name: "Metered SRL", kind: "customer" } })).data
  const subscription = (yield* api.metering.create({
    payload: { contact_id: contact.id, processor_customer_id: "cus_Metered1", meter_event_name: "api_requests" }
  })).data
  const report = (body: unknown, token = f.tokens.api, id = subscription.id) =>
    call("POST", `/v1/subscriptions/${id}/usage`, { token, body })
  const usage = (query = "") =>
    Effect.map(call("GET", `/v1/subscriptions/${subscription.id}/usage${query}`, { token: f.tokens.api }), (r) => r.json)
  return { f, api, contact, subscription, report, usage }
})

describe("/v1/subscriptions handlers over the memory core", () => {
  layer(ApiTestLayer)((it) => {
    it.effect("creates, reads, lists and moves a subscription through its lifecycle", () =>
      Effect.gen(function*() {
        const { api, contact, f, subscription } = yield* setup
        expect(subscription).toEqual({
          id: expect.any(String),
          contact_id: contact.id,
          processor: "stripe",
          processor_customer_id: "cus_Metered1",
          meter_event_name: "api_requests",
          status: "active",
          created_at: iso(NOW),
          updated_at: iso(NOW)
        })
        expect((yield* api.metering.get({ params: { id: subscription.id } })).data).toEqual(subscription)
        const created = yield* call("POST", "/v1/subscriptions", {
          token: f.tokens.api,
          body: { contact_id: contact.id, processor: "stripe", processor_customer_id: "cus_Other", meter_event_name: "gb_stored" }
        })
        expect(created.status).toBe(201)

        const paused = yield* api.metering.update({ params: { id: subscription.id }, payload: { status: "paused" } })
        expect(paused.data.status).toBe("paused")
        expect((yield* api.metering.list({ query: { status: "paused" } })).data.map((s) => s.id)).toEqual([subscription.id])
        expect((yield* api.metering.list({ query: { contact_id: contact.id } })).meta.total).toBe(2)
        expect((yield* api.metering.list({ query: {} })).data.map((s) => s.id)).toEqual([created.json.data.id, subscription.id])
        expect((yield* api.metering.update({ params: { id: subscription.id }, payload: { status: "active" } })).data.status)
          .toBe("active")
        const renamed = yield* api.metering.update({ params: { id: subscription.id }, payload: { meter_event_name: "calls" } })
        expect(renamed.data.meter_event_name).toBe("calls")
        expect((yield* api.metering.update({ params: { id: subscription.id }, payload: { status: "cancelled" } })).data.status)
          .toBe("cancelled")
        const back = yield* call("PATCH", `/v1/subscriptions/${subscription.id}`, { token: f.tokens.api, body: { status: "active" } })
        expect(back.status).toBe(409)
        expect(back.json.error.code).toBe("invalid_transition")
        expect(back.json.error.message).toBe("A subscription cannot go from cancelled to active")
        const edit = yield* call("PATCH", `/v1/subscriptions/${subscription.id}`, { token: f.tokens.api, body: { meter_event_name: "x" } })
        expect(edit.status).toBe(409)
        expect(edit.json.error.code).toBe("conflict")
        expect(edit.json.error.message).toBe("A cancelled subscription cannot change")
        // Nothing to change is no change, even on a cancelled subscription.
        const same = yield* call("PATCH", `/v1/subscriptions/${subscription.id}`, { token: f.tokens.api, body: { status: "cancelled" } })
        expect(same.status).toBe(200)
      }))

    it.effect("pauses and cancels from paused; repeating the status is no change", () =>
      Effect.gen(function*() {
        const { f, subscription } = yield* setup
        const patch = (status: string) => call("PATCH", `/v1/subscriptions/${subscription.id}`, { token: f.tokens.api, body: { status } })
        expect((yield* patch("paused")).json.data.status).toBe("paused")
        yield* TestClock.adjust("1 minute")
        const again = yield* patch("paused")
        expect([again.status, again.json.data.updated_at]).toEqual([200, iso(NOW)])
        expect((yield* patch("cancelled")).json.data).toMatchObject({ status: "cancelled", updated_at: iso(NOW + 60_000) })
        expect((yield* patch("paused")).json.error.code).toBe("invalid_transition")
      }))

    it.effect("names a contact of the tenant only, and validates the processor fields", () =>
      Effect.gen(function*() {
        const { contact, f } = yield* setup
        const other = yield* makeFixture()
        const theirs = (yield* (yield* client(other.tokens.api)).contacts.create({ payload: { name: "Theirs", kind: "customer" } })).data
        const body = { processor_customer_id: "cus_X1", meter_event_name: "calls" }
        for (const contactId of [theirs.id, "00000000-0000-4000-8000-00000000c0de"]) {
          const res = yield* call("POST", "/v1/subscriptions", { token: f.tokens.api, body: { ...body, contact_id: contactId } })
          expect(res.status).toBe(404)
          expect(res.json.error.code).toBe("not_found")
        }
        const sandbox = yield* call("POST", "/v1/subscriptions", { token: f.tokens.sandbox, body: { ...body, contact_id: contact.id } })
        expect(sandbox.status).toBe(404)
        const bad = yield* call("POST", "/v1/subscriptions", {
          token: f.tokens.api,
          body: { contact_id: "x", processor: "paypal", processor_customer_id: "acct_1", meter_event_name: "has space" }
        })
        expect(invalidFields(bad)).toEqual(["contact_id", "meter_event_name", "processor", "processor_customer_id"])
        const long = yield* call("POST", "/v1/subscriptions", {
          token: f.tokens.api,
          body: { contact_id: contact.id, processor_customer_id: "cus_1", meter_event_name: "m".repeat(101) }
        })
        expect(invalidFields(long)).toEqual(["meter_event_name"])
        const fixed = yield* call("POST", "/v1/subscriptions", {
          token: f.tokens.api,
          body: { contact_id: contact.id, ...body, status: "paused" }
        })
        expect(invalidFields(fixed)).toEqual(["status"])
      }))

    it.effect("is invisible to another organization and to the other environment", () =>
      Effect.gen(function*() {
        const { f, subscription } = yield* setup
        for (const api of yield* outsiders(f)) {
          expectNotFound(yield* Effect.flip(api.metering.get({ params: { id: subscription.id } })))
          expectNotFound(yield* Effect.flip(api.metering.update({ params: { id: subscription.id }, payload: { status: "paused" } })))
          expectNotFound(yield* Effect.flip(api.metering.reportUsage({ params: { id: subscription.id }, payload: { quantity: 1 } })))
          expectNotFound(yield* Effect.flip(api.metering.listUsage({ params: { id: subscription.id }, query: {} })))
          expect((yield* api.metering.list({ query: {} })).meta.total).toBe(0)
        }
      }))
  })
})

describe("POST /v1/subscriptions/{id}/usage over the memory core", () => {
  layer(ApiTestLayer)((it) => {
    it.effect("records a report once per identifier: 200 with an empty body, retries a no-op", () =>
      Effect.gen(function*() {
        const { report, subscription, usage } = yield* setup
        const first = yield* report({ quantity: 5, identifier: "req-1", timestamp: "2026-11-23T11:00:00+02:00" })
        expect(first.status).toBe(200)
        expect(first.json).toBeUndefined()
        yield* TestClock.adjust("1 minute")
        const retry = yield* report({ quantity: 5, identifier: "req-1", timestamp: "2026-11-23T09:00:00Z" })
        expect([retry.status, retry.json]).toEqual([200, undefined])
        const listed = yield* usage()
        expect(listed.meta.total).toBe(1)
        expect(listed.data[0]).toEqual({
          id: expect.any(String),
          subscription_id: subscription.id,
          identifier: "req-1",
          quantity: 5,
          timestamp: "2026-11-23T09:00:00.000Z",
          processor: "stripe",
          processor_customer_id: "cus_Metered1",
          meter_event_name: "api_requests",
          differing_retries: 0,
          last_differing_retry_at: null,
          created_at: iso(NOW),
          forwarding_status: "pending",
          attempts: 0,
          next_attempt_at: iso(NOW),
          last_attempt_at: null,
          last_error: null,
          forwarded_at: null
        })
      }))

    it.effect("keeps the first report when a retry differs, and counts the retry on the record", () =>
      Effect.gen(function*() {
        const { report, usage } = yield* setup
        yield* report({ quantity: 5, identifier: "req-2" })
        yield* TestClock.adjust("10 seconds")
        // No timestamp: the one resolved at first acceptance stands, so this retry agrees.
        expect((yield* report({ quantity: 5, identifier: "req-2" })).status).toBe(200)
        expect((yield* usage()).data[0].differing_retries).toBe(0)
        expect((yield* report({ quantity: 7, identifier: "req-2" })).status).toBe(200)
        yield* TestClock.adjust("10 seconds")
        expect((yield* report({ quantity: 5, identifier: "req-2", timestamp: iso(NOW - 1000) })).status).toBe(200)
        const [record] = (yield* usage()).data
        expect([record.quantity, record.timestamp, record.differing_retries, record.last_differing_retry_at]).toEqual([
          5,
          iso(NOW),
          2,
          iso(NOW + 20_000)
        ])
      }))

    it.effect("gives a report without an identifier its own, the record's id", () =>
      Effect.gen(function*() {
        const { report, usage } = yield* setup
        yield* report({ quantity: 1 })
        yield* report({ quantity: 1 })
        const listed = (yield* usage()).data
        expect(listed).toHaveLength(2)
        for (const r of listed) expect(r.identifier).toBe(r.id)
      }))

    it.effect("answers 400 naming each bad field, and nothing is recorded", () =>
      Effect.gen(function*() {
        const { report, usage } = yield* setup
        const cases: Array<[unknown, Array<string>]> = [
          [{}, ["quantity"]],
          [{ quantity: 0 }, ["quantity"]],
          [{ quantity: -3 }, ["quantity"]],
          [{ quantity: 1.5 }, ["quantity"]],
          [{ quantity: "5" }, ["quantity"]],
          [{ quantity: 2 ** 53 }, ["quantity"]],
          [{ quantity: 1e300 }, ["quantity"]],
          [{ quantity: 1, identifier: "" }, ["identifier"]],
          [{ quantity: 1, identifier: "x".repeat(101) }, ["identifier"]],
          [{ quantity: 1, timestamp: "yesterday" }, ["timestamp"]],
          [{ quantity: 1, timestamp: "2026-11-23T12:00:00" }, ["timestamp"]],
          [{ quantity: 1, timestamp: "10000-01-01T00:00:00Z" }, ["timestamp"]],
          [{ quantity: 1, extra: true }, ["extra"]]
        ]
        for (const [body, fields] of cases) expect(invalidFields(yield* report(body), JSON.stringify(body))).toEqual(fields)
        expect((yield* report({ quantity: 1, identifier: "x".repeat(100) })).status).toBe(200)
        expect((yield* usage()).meta.total).toBe(1)
      }))

    it.effect("accepts a timestamp within 35 days back and 5 minutes ahead, and names the window otherwise", () =>
      Effect.gen(function*() {
        const { report, usage } = yield* setup
        for (const at of [NOW - 35 * DAY, NOW + 5 * 60_000, NOW]) {
          expect((yield* report({ quantity: 1, timestamp: iso(at) })).status, iso(at)).toBe(200)
        }
        for (const at of [NOW - 35 * DAY - 1000, NOW + 5 * 60_000 + 1000, Date.UTC(9999, 11, 30)]) {
          const res = yield* report({ quantity: 1, timestamp: iso(at) })
          expect(invalidFields(res, iso(at))).toEqual(["timestamp"])
          expect(res.json.error.details[0].issue).toBe(
            `must be within the last 35 days and at most 5 minutes ahead: between ${iso(NOW - 35 * DAY)} and ${iso(NOW + 5 * 60_000)}`
          )
        }
        // Past the API's instant range, the range itself is named.
        const beyond = yield* report({ quantity: 1, timestamp: iso(Date.UTC(9999, 11, 31)) })
        expect(invalidFields(beyond, "9999-12-31")).toEqual(["timestamp"])
        expect(beyond.json.error.details[0].issue).toMatch(/from 0001-01-02T00:00:00\.000Z to 9999-12-30T23:59:59\.999Z/)
        expect((yield* usage()).meta.total).toBe(3)
      }))

    it.effect("refuses usage on a subscription that is not active with 409, yet a retry of an accepted report stays a no-op", () =>
      Effect.gen(function*() {
        const { api, report, subscription, usage } = yield* setup
        yield* report({ quantity: 2, identifier: "before-pause", timestamp: iso(NOW - 1000) })
        for (const status of ["paused", "cancelled"] as const) {
          yield* api.metering.update({ params: { id: subscription.id }, payload: { status } })
          const refused = yield* report({ quantity: 2, identifier: `during-${status}` })
          expect(refused.status).toBe(409)
          expect(refused.json.error.code).toBe("conflict")
          expect(refused.json.error.message).toBe(`The subscription is ${status}: usage is accepted only while it is active`)
          expect((yield* report({ quantity: 2, identifier: "before-pause", timestamp: iso(NOW - 1000) })).status).toBe(200)
        }
        // 36 days on, the window has moved; the retry is still the same report.
        yield* TestClock.adjust("36 days")
        expect((yield* report({ quantity: 2, identifier: "before-pause", timestamp: iso(NOW - 1000) })).status).toBe(200)
        expect((yield* usage()).meta.total).toBe(1)
      }))

    it.effect("lists usage newest first, filtered by forwarding status, under subscriptions:read", () =>
      Effect.gen(function*() {
        const { f, report, subscription, usage } = yield* setup
        for (const n of [1, 2, 3]) {
          yield* report({ quantity: n, identifier: `n-${n}` })
          yield* TestClock.adjust("1 second")
        }
        expect((yield* usage("?perPage=2")).data.map((r: any) => r.identifier)).toEqual(["n-3", "n-2"])
        expect((yield* usage("?forwarding_status=pending")).meta.total).toBe(3)
        expect((yield* usage("?forwarding_status=delivered")).meta.total).toBe(0)
        expect(invalidFields(yield* call("GET", `/v1/subscriptions/${subscription.id}/usage?forwarding_status=lost`, { token: f.tokens.api })))
          .toEqual(["forwarding_status"])
      }))
  })
})
