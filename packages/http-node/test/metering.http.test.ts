import { Clock, Effect, Layer, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ForwardingSettings, UsageForwarder } from "@opsplatform/core"
import type { Fixture } from "@opsplatform/testing"
import { type FakeStripe, startFakeStripe } from "@opsplatform/testing/fakeStripe"
import { StripePaymentProcessor } from "../src/server/stripe.ts"
import { isolatedDatabase, testDatabases } from "./support/databases.ts"
import {
  callsFor,
  eventsOf,
  freshCustomer,
  LIVE_KEY,
  meteringEnv,
  reportUsage,
  subscribe,
  TEST_KEY,
  usageRecords
} from "./support/metering.ts"
import { seedFixture, shiftedClock, startTestServer, type TestServer } from "./support/server.ts"
import { eventually } from "./support/webhooks.ts"

const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000)

for (const db of testDatabases()) {
  describe(`usage metering through the real server, forwarded to Stripe (${db.name})`, () => {
    let fake: FakeStripe
    let server: TestServer
    let f: Fixture
    let isolated: Awaited<ReturnType<typeof isolatedDatabase>>
    beforeAll(async () => {
      fake = await startFakeStripe({ apiKeys: [TEST_KEY, LIVE_KEY] })
      // Forwarders claim whatever is due in their database: this server's must not take other files' usage.
      isolated = await isolatedDatabase(db, "metering_http")
      server = await startTestServer(isolated.choice, { background: true, env: meteringEnv(fake) })
      f = await seedFixture(server)
    }, 60_000)
    afterAll(async () => {
      await server.close()
      await fake.close()
      await isolated.drop()
    })

    const delivered = (subscriptionId: string, count: number) =>
      eventually(
        () => usageRecords(server, f.tokens.sandbox, subscriptionId),
        (list) => list.length === count && list.every((r) => r.forwarding_status === "delivered"),
        20_000
      )

    it("a newcomer's flow: three reports under one identifier and one without reach Stripe as exactly two meter events", async () => {
      const customer = freshCustomer("Done")
      const sub = await subscribe(server, f.tokens.sandbox, customer)
      const at = new Date(Date.now() - 3_600_000).toISOString()
      for (let i = 0; i < 3; i++) {
        const res = await reportUsage(server, f.tokens.sandbox, sub.id, { quantity: 3, timestamp: at, identifier: "done-1" })
        expect([res.status, res.text]).toEqual([200, ""])
      }
      const bare = await reportUsage(server, f.tokens.sandbox, sub.id, { quantity: 2 })
      expect([bare.status, bare.text]).toEqual([200, ""])

      const records = await delivered(sub.id, 2)
      const [withoutId, withId] = records
      expect(withId).toMatchObject({ identifier: "done-1", quantity: 3, timestamp: new Date(at).toISOString(), attempts: 1, last_error: null })
      expect(withoutId).toMatchObject({ identifier: withoutId.id, quantity: 2, timestamp: withoutId.created_at, attempts: 1 })
      for (const r of records) expect(Date.parse(r.forwarded_at)).toBeGreaterThanOrEqual(Date.parse(r.created_at))
      // Nothing more comes: a forwarder would have sent it by now.
      await new Promise((r) => setTimeout(r, 300))
      const events = eventsOf(fake, customer)
      expect(events.map((e) => ({ ...e, created: 0 })).sort((a, b) => a.timestamp - b.timestamp)).toEqual([
        { identifier: withId.id, event_name: "api_requests", customer, value: "3", timestamp: seconds(at), livemode: false, created: 0 },
        {
          identifier: withoutId.id,
          event_name: "api_requests",
          customer,
          value: "2",
          timestamp: seconds(withoutId.created_at),
          livemode: false,
          created: 0
        }
      ])
      expect(callsFor(fake, customer)).toHaveLength(2)
    })

    it("retries 5xx and 429 with backoff until Stripe takes the event, counting every call", async () => {
      const customer = freshCustomer("Retry")
      fake.fail({ status: 500, message: "Stripe had a problem" }, { customer, times: 2 })
      fake.fail({ status: 429, code: "rate_limit", message: "Too many requests" }, { customer })
      const sub = await subscribe(server, f.tokens.sandbox, customer)
      await reportUsage(server, f.tokens.sandbox, sub.id, { quantity: 5, identifier: "retry-1" })
      const [record] = await delivered(sub.id, 1)
      expect(record).toMatchObject({ attempts: 4, last_error: null, next_attempt_at: null })
      const calls = callsFor(fake, customer)
      expect(calls.map((c) => c.status)).toEqual([500, 500, 429, 200])
      expect(new Set(calls.map((c) => c.form.identifier))).toEqual(new Set([record.id]))
      expect(eventsOf(fake, customer)).toHaveLength(1)
    })

    it("counts Stripe's refusal of an identifier it already holds as delivered: the event got there once", async () => {
      const customer = freshCustomer("Dup")
      // Stripe records the event, but the answer never arrives, twice (the SDK retries a closed connection once).
      fake.fail({ drop: "after" }, { customer, times: 2 })
      const sub = await subscribe(server, f.tokens.sandbox, customer)
      await reportUsage(server, f.tokens.sandbox, sub.id, { quantity: 9 })
      const [record] = await delivered(sub.id, 1)
      expect(record.attempts).toBe(2)
      expect(record.last_error).toBe(`An event already exists with identifier ${record.id}.`)
      expect(callsFor(fake, customer).map((c) => c.status)).toEqual([null, null, 400])
      expect(eventsOf(fake, customer)).toHaveLength(1)
    })

    it("marks a record Stripe refuses failed, with Stripe's message, visible through the API, and sends it no more", async () => {
      const customer = freshCustomer("Refused")
      fake.fail({ status: 400, message: `No such customer: '${customer}'` }, { customer })
      const sub = await subscribe(server, f.tokens.sandbox, customer)
      await reportUsage(server, f.tokens.sandbox, sub.id, { quantity: 1, identifier: "refused-1" })
      const [record] = await eventually(
        () => usageRecords(server, f.tokens.sandbox, sub.id),
        (list) => list[0]?.forwarding_status === "failed",
        20_000
      )
      expect(record).toMatchObject({ attempts: 1, last_error: `No such customer: '${customer}'`, forwarded_at: null, next_attempt_at: null })
      const failed = await usageRecords(server, f.tokens.sandbox, sub.id)
      expect(failed).toHaveLength(1)
      await new Promise((r) => setTimeout(r, 300))
      expect(callsFor(fake, customer)).toHaveLength(1)
    })

    it("200 concurrent retries of one identifier record one row and one meter event", async () => {
      const customer = freshCustomer("Many")
      const sub = await subscribe(server, f.tokens.sandbox, customer)
      const answers = await Promise.all(Array.from({ length: 200 }, (_, i) =>
        reportUsage(server, f.tokens.sandbox, sub.id, { quantity: i % 2 === 0 ? 4 : 5, identifier: "burst" })))
      expect(answers.map((a) => a.status)).toEqual(Array(200).fill(200))
      const [record] = await delivered(sub.id, 1)
      expect(record.identifier).toBe("burst")
      // Whichever arrived first stands; the 100 retries that said the other quantity are counted.
      expect(record.differing_retries).toBe(100)
      expect(eventsOf(fake, customer).map((e) => e.value)).toEqual([String(record.quantity)])
      expect(fake.overlaps()).toBe(0)
    }, 60_000)

    it("keeps live usage pending while only the test key is configured: nothing is dropped", async () => {
      const customer = freshCustomer("Live")
      const sub = await subscribe(server, f.tokens.api, customer)
      await reportUsage(server, f.tokens.api, sub.id, { quantity: 8, identifier: "live-1" })
      await new Promise((r) => setTimeout(r, 400))
      const [record] = await usageRecords(server, f.tokens.api, sub.id)
      expect(record).toMatchObject({ forwarding_status: "pending", attempts: 0 })
      expect(callsFor(fake, customer)).toHaveLength(0)
    })
  })
}

describe("usage waits as pending without keys, and goes once a key is configured (pglite)", () => {
  const db = testDatabases()[0]!
  let fake: FakeStripe
  let server: TestServer
  let f: Fixture
  const clock = shiftedClock()
  beforeAll(async () => {
    fake = await startFakeStripe({ apiKeys: [TEST_KEY] })
    server = await startTestServer(db.choice(), { background: true, clock: clock.clock, env: { OPSPLATFORM_METERING_POLL_MS: "50" } })
    f = await seedFixture(server)
  }, 60_000)
  afterAll(async () => {
    await server.close()
    await fake.close()
  })

  it("sends what waited, and fails without a call what has grown older than Stripe accepts", async () => {
    const customer = freshCustomer("Wait")
    const sub = await subscribe(server, f.tokens.sandbox, customer)
    const edge = new Date(Date.now() - 35 * 86_400_000 + 60_000).toISOString()
    await reportUsage(server, f.tokens.sandbox, sub.id, { quantity: 1, identifier: "recent" })
    await reportUsage(server, f.tokens.sandbox, sub.id, { quantity: 1, identifier: "edge", timestamp: edge })
    await new Promise((r) => setTimeout(r, 300))
    expect((await usageRecords(server, f.tokens.sandbox, sub.id)).map((r) => [r.forwarding_status, r.attempts])).toEqual([
      ["pending", 0],
      ["pending", 0]
    ])
    // Two minutes on, the edge record is older than 35 days; a forwarder with a key comes.
    clock.advance(120_000)
    const summary = await server.run(Effect.gen(function*() {
      return yield* (yield* UsageForwarder.UsageForwarder).drain
    // Fresh: the server's own forwarder (without a key) is built from the same layer.
    }).pipe(Effect.provide(Layer.fresh(UsageForwarder.UsageForwarder.layer).pipe(
      Layer.provide(StripePaymentProcessor({
        apiBase: new URL(fake.url),
        keys: { sandbox: Redacted.make(TEST_KEY) },
        timeoutMs: 2_000,
        appName: "opsplatform"
      })),
      Layer.provide(Layer.succeed(ForwardingSettings.ForwardingSettings, ForwardingSettings.defaultForwardingSettings))
    )), Effect.provideService(Clock.Clock, clock.clock)))
    expect(summary).toEqual({ calls: 1, delivered: 1, retrying: 0, failed: 1 })
    const byIdentifier = Object.fromEntries((await usageRecords(server, f.tokens.sandbox, sub.id)).map((r) => [r.identifier, r]))
    expect(byIdentifier.recent).toMatchObject({ forwarding_status: "delivered", attempts: 1 })
    expect(byIdentifier.edge).toMatchObject({
      forwarding_status: "failed",
      attempts: 0,
      last_error: "The usage is older than the processor accepts (35 days); it was not sent"
    })
    expect(eventsOf(fake, customer).map((e) => e.identifier)).toEqual([byIdentifier.recent.id])
  })
})

for (const db of testDatabases()) {
  describe(`concurrent first reports of a new customer and meter, each report its own statement (${db.name})`, () => {
    let server: TestServer
    let f: Fixture
    let isolated: Awaited<ReturnType<typeof isolatedDatabase>>
    beforeAll(async () => {
      isolated = await isolatedDatabase(db, "metering_streams")
      // Without grouping, as many statements as reports race to create the customer's and meter's stream.
      server = await startTestServer(isolated.choice, { env: { OPSPLATFORM_METERING_GROUP_MAX: "1" } })
      f = await seedFixture(server)
    }, 60_000)
    afterAll(async () => {
      await server.close()
      await isolated.drop()
    })

    it("are all recorded: the stream's creation never fails one of them", async () => {
      for (let round = 0; round < 20; round++) {
        const customer = freshCustomer("Race")
        const subs = await Promise.all([1, 2, 3, 4].map(() => subscribe(server, f.tokens.sandbox, customer)))
        const answers = await Promise.all(Array.from({ length: 16 }, (_, i) =>
          reportUsage(server, f.tokens.sandbox, subs[i % 4]!.id, { quantity: 1, identifier: `r${i}` })))
        expect(answers.map((a) => `${a.status} ${a.text}`), `round ${round}`).toEqual(Array(16).fill("200 "))
        for (const s of subs) expect(await usageRecords(server, f.tokens.sandbox, s.id)).toHaveLength(4)
      }
    }, 120_000)
  })
}
