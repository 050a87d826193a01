import { Effect, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ForwardingSettings, PaymentProcessor } from "@opsplatform/core"
import { type FakeStripe, startFakeStripe } from "@opsplatform/testing/fakeStripe"
import { CoreConfig, layerTest } from "../src/config/Configuration.ts"
import { RecordingSettingsLive } from "../src/server/metering.ts"
import { StripePaymentProcessor, type StripeSettings } from "../src/server/stripe.ts"

const TEST_KEY = "sk_test_opsplatform_fake_0001"
const LIVE_KEY = "sk_live_opsplatform_fake_0002"

const processorOn = (fake: FakeStripe, overrides: Partial<StripeSettings> = {}) =>
  Effect.runSync(Effect.gen(function*() {
    return yield* PaymentProcessor.PaymentProcessor
  }).pipe(Effect.provide(StripePaymentProcessor({
    apiBase: new URL(fake.url),
    keys: { sandbox: Redacted.make(TEST_KEY) },
    timeoutMs: 2_000,
    appName: "opsplatform",
    ...overrides
  }))))

let n = 0
const event = (customer: string, overrides: Partial<PaymentProcessor.MeterEvent> = {}): PaymentProcessor.MeterEvent => ({
  eventName: "api_requests",
  customerId: customer,
  value: 42,
  timestamp: Math.floor(Date.now() / 1000) - 60,
  identifier: `0199a1b2-0000-7000-8000-${String(++n).padStart(12, "0")}`,
  ...overrides
})

describe("the Stripe adapter: the official SDK against the fake on loopback", () => {
  let fake: FakeStripe
  let stripe: PaymentProcessor.PaymentProcessor["Service"]
  beforeAll(async () => {
    fake = await startFakeStripe({ apiKeys: [TEST_KEY, LIVE_KEY] })
    stripe = processorOn(fake)
  })
  afterAll(() => fake.close())
  const send = (e: PaymentProcessor.MeterEvent, environment: "live" | "sandbox" = "sandbox") =>
    Effect.runPromise(stripe.send(environment, e))

  it("sends one form-encoded meter event with the test key, and Stripe records it", async () => {
    const e = event("cus_Form1")
    expect(await send(e)).toEqual({ _tag: "Accepted" })
    const request = fake.requests.at(-1)!
    expect([request.method, request.path, request.status]).toEqual(["POST", "/v1/billing/meter_events", 200])
    expect(request.form).toEqual({
      event_name: "api_requests",
      "payload[stripe_customer_id]": "cus_Form1",
      "payload[value]": "42",
      identifier: e.identifier,
      timestamp: String(e.timestamp)
    })
    expect(request.headers["content-type"]).toBe("application/x-www-form-urlencoded")
    expect(request.headers.authorization).toBe(`Bearer ${TEST_KEY}`)
    expect(String(request.headers["user-agent"])).toMatch(/^Stripe\/v1 NodeBindings\/[\d.]+ opsplatform/)
    expect(String(request.headers["idempotency-key"])).toMatch(/^stripe-node-retry-/)
    expect(request.headers["stripe-version"]).toEqual(expect.any(String))
    expect(fake.events.at(-1)).toMatchObject({ identifier: e.identifier, customer: "cus_Form1", value: "42", timestamp: e.timestamp, livemode: false })
  })

  it("files the second event under an identifier as already recorded: Stripe refuses it with a 400", async () => {
    const e = event("cus_Dup1")
    await send(e)
    const again = await send({ ...e, value: 7 })
    expect(again).toEqual({ _tag: "AlreadyRecorded", message: `An event already exists with identifier ${e.identifier}.` })
    expect(fake.requests.at(-1)!.status).toBe(400)
    expect(fake.events.filter((x) => x.identifier === e.identifier)).toHaveLength(1)
  })

  it("files any other 400 as refused, with Stripe's message", async () => {
    fake.fail({ status: 400, message: "No such customer: 'cus_Gone1'" }, { customer: "cus_Gone1" })
    expect(await send(event("cus_Gone1"))).toEqual({ _tag: "Refused", status: 400, message: "No such customer: 'cus_Gone1'" })
  })

  it("files 429 and 5xx as unavailable after one request each (the SDK does not retry them), Retry-After kept", async () => {
    const before = fake.requests.length
    fake.fail({ status: 429, code: "rate_limit", message: "Too many requests", retryAfter: 7 }, { customer: "cus_Busy1" })
    expect(await send(event("cus_Busy1"))).toEqual({ _tag: "Unavailable", status: 429, message: "Too many requests", retryAfterMs: 7_000 })
    fake.fail({ status: 500, message: "Stripe is having a moment" }, { customer: "cus_Busy1" })
    expect(await send(event("cus_Busy1"))).toMatchObject({ _tag: "Unavailable", status: 500, message: "Stripe is having a moment" })
    fake.fail({ status: 503 }, { customer: "cus_Busy1" })
    expect(await send(event("cus_Busy1"))).toMatchObject({ _tag: "Unavailable", status: 503 })
    expect(fake.requests.length - before).toBe(3)
    expect(fake.events.filter((x) => x.customer === "cus_Busy1")).toHaveLength(0)
  })

  it("a connection closed before Stripe answered is retried once by the SDK under the same idempotency key", async () => {
    fake.fail({ drop: "after" }, { customer: "cus_Drop1" })
    const e = event("cus_Drop1")
    expect(await send(e)).toEqual({ _tag: "Accepted" })
    const [first, second] = fake.requests.filter((r) => r.form["payload[stripe_customer_id]"] === "cus_Drop1")
    expect(first!.status).toBeNull()
    expect(second!.status).toBe(200)
    expect(second!.headers["idempotency-key"]).toBe(first!.headers["idempotency-key"])
    expect(fake.events.filter((x) => x.identifier === e.identifier)).toHaveLength(1)
  })

  it("files no answer at all (twice closed, refused connection, timeout) as unavailable", async () => {
    fake.fail({ drop: "before" }, { customer: "cus_Drop2", times: 2 })
    const dropped = await send(event("cus_Drop2"))
    expect(dropped).toMatchObject({ _tag: "Unavailable", status: null })
    expect(fake.events.filter((x) => x.customer === "cus_Drop2")).toHaveLength(0)

    const closed = await startFakeStripe({ apiKeys: [TEST_KEY] })
    await closed.close()
    const nowhere = await Effect.runPromise(processorOn(closed).send("sandbox", event("cus_Nowhere")))
    expect(nowhere).toMatchObject({ _tag: "Unavailable", status: null, message: expect.stringMatching(/connection to Stripe/) })

    const slow = await startFakeStripe({ apiKeys: [TEST_KEY], delayMs: 1_000 })
    try {
      const late = await Effect.runPromise(processorOn(slow, { timeoutMs: 200 }).send("sandbox", event("cus_Slow")))
      expect(late).toMatchObject({ _tag: "Unavailable", status: null, message: expect.stringMatching(/timeout/) })
    } finally {
      await slow.close()
    }
  })

  it("uses the live key for live usage only, and knows no environment without a key", async () => {
    const both = processorOn(fake, { keys: { sandbox: Redacted.make(TEST_KEY), live: Redacted.make(LIVE_KEY) } })
    expect([...both.environments].sort()).toEqual(["live", "sandbox"])
    const e = event("cus_Live1")
    expect(await Effect.runPromise(both.send("live", e))).toEqual({ _tag: "Accepted" })
    expect(fake.requests.at(-1)!.headers.authorization).toBe(`Bearer ${LIVE_KEY}`)
    expect(fake.events.at(-1)!.livemode).toBe(true)
    expect(stripe.environments).toEqual(["sandbox"])
    expect(await send(event("cus_Live2"), "live")).toMatchObject({ _tag: "Unavailable", message: "No Stripe key for the live environment" })
  })

  it("files a key Stripe does not know as unavailable (401): a credential problem is not the record's fault", async () => {
    const wrong = processorOn(fake, { keys: { sandbox: Redacted.make("sk_test_unknown_9999") } })
    const result = await Effect.runPromise(wrong.send("sandbox", event("cus_Key1")))
    expect(result).toMatchObject({ _tag: "Unavailable", status: 401 })
    expect(JSON.stringify(result)).not.toContain("sk_test_unknown_9999")
  })
})

describe("metering configuration from the environment", () => {
  const settingsFrom = (env: Record<string, string>) =>
    Effect.runPromise(Effect.map(CoreConfig, (config) => config.metering).pipe(Effect.provide(layerTest(env))))

  it("points the SDK at OPSPLATFORM_STRIPE_API_BASE and keeps each key to its environment", async () => {
    const s = await settingsFrom({
      OPSPLATFORM_STRIPE_API_BASE: "http://127.0.0.1:12111",
      OPSPLATFORM_STRIPE_TEST_KEY: TEST_KEY,
      OPSPLATFORM_METERING_RETRY_BASE_MS: "50"
    })
    expect(s.stripe.apiBase.origin).toBe("http://127.0.0.1:12111")
    expect(Object.keys(s.stripe.keys)).toEqual(["sandbox"])
    expect(Redacted.value(s.stripe.keys.sandbox!)).toBe(TEST_KEY)
    expect(s.forwarding.retry).toEqual({ baseMs: 50, maxMs: 600_000 })
    expect(s.forwarding.leaseMs).toBe(60_000)
    const defaults = await settingsFrom({})
    expect([defaults.stripe.apiBase.href, Object.keys(defaults.stripe.keys)]).toEqual(["https://api.stripe.com/", []])
  })

  it("refuses a key of the wrong mode, naming the variable and never the key", async () => {
    for (const [variable, key] of [["OPSPLATFORM_STRIPE_TEST_KEY", LIVE_KEY], ["OPSPLATFORM_STRIPE_LIVE_KEY", TEST_KEY]] as const) {
      const error = await settingsFrom({ [variable]: key }).then(() => undefined, (e) => e as Error)
      expect(error?.message).toContain(variable)
      expect(error?.message).not.toContain(key)
    }
  })

  it("reads how usage reports are grouped into statements, and refuses a malformed value", async () => {
    const recordingFrom = (env: Record<string, string>) =>
      Effect.runPromise(
        Effect.gen(function*() {
          return yield* ForwardingSettings.RecordingSettings
        }).pipe(Effect.provide(RecordingSettingsLive), Effect.provide(layerTest(env)))
      )
    expect(await recordingFrom({})).toEqual({ maxGroup: 100, groupsInFlight: 2 })
    expect(await recordingFrom({ OPSPLATFORM_METERING_GROUP_MAX: "1", OPSPLATFORM_METERING_GROUPS_IN_FLIGHT: "4" })).toEqual({
      maxGroup: 1,
      groupsInFlight: 4
    })
    for (const variable of ["OPSPLATFORM_METERING_GROUP_MAX", "OPSPLATFORM_METERING_GROUPS_IN_FLIGHT"]) {
      const error = await recordingFrom({ [variable]: "0" }).then(() => undefined, (e) => e as Error)
      expect(error?.message).toBe(`${variable} must be a positive integer, got '0'`)
    }
  })

  it("refuses an API base the SDK cannot honour and a malformed number", async () => {
    for (const base of ["not a url", "ftp://stripe.example", "https://stripe.example/v1", "https://stripe.example/?x=1"]) {
      const error = await settingsFrom({ OPSPLATFORM_STRIPE_API_BASE: base }).then(() => undefined, (e) => e as Error)
      expect(error?.message, base).toContain("OPSPLATFORM_STRIPE_API_BASE")
    }
    const error = await settingsFrom({ OPSPLATFORM_METERING_LEASE_MS: "soon" }).then(() => undefined, (e) => e as Error)
    expect(error?.message).toBe("OPSPLATFORM_METERING_LEASE_MS must be a positive integer, got 'soon'")
  })
})
