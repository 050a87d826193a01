import { randomBytes } from "node:crypto"
import type { FakeStripe } from "@opsplatform/testing/fakeStripe"
import { call, type TestServer } from "./server.ts"

/** Test-mode and live-mode keys the fake accepts (made up; never real ones). */
export const TEST_KEY = "sk_test_opsplatform_fake_0001"
export const LIVE_KEY = "sk_live_opsplatform_fake_0002"

/** A server's metering configuration against the fake, with the forwarder's waits shortened. */
export const meteringEnv = (fake: FakeStripe, extra: Record<string, string> = {}): Record<string, string> => ({
  OPSPLATFORM_STRIPE_API_BASE: fake.url,
  OPSPLATFORM_STRIPE_TEST_KEY: TEST_KEY,
  OPSPLATFORM_STRIPE_TIMEOUT_MS: "2000",
  OPSPLATFORM_METERING_POLL_MS: "50",
  OPSPLATFORM_METERING_RETRY_BASE_MS: "50",
  OPSPLATFORM_METERING_RETRY_MAX_MS: "200",
  ...extra
})

/**
 * A Stripe customer id no other test (or earlier run on the same PostgreSQL)
 * uses: forwarders claim every due stream of the database, so a test looks at
 * its own customers' events only.
 */
export const freshCustomer = (label: string) => `cus_${label}${randomBytes(6).toString("hex")}`

/** A contact and an active subscription for `customer`, through the API. */
export const subscribe = async (server: TestServer, token: string, customer: string, meter = "api_requests") => {
  const contact = await call(server, "POST", "/v1/contacts", { token, body: { name: `Customer ${customer}`, kind: "customer" } })
  if (contact.status !== 201) throw new Error(`creating a contact answered ${contact.status}: ${contact.text}`)
  const res = await call(server, "POST", "/v1/subscriptions", {
    token,
    body: { contact_id: contact.json.data.id, processor_customer_id: customer, meter_event_name: meter }
  })
  if (res.status !== 201) throw new Error(`creating a subscription answered ${res.status}: ${res.text}`)
  return res.json.data as { readonly id: string; readonly processor_customer_id: string; readonly meter_event_name: string }
}

export const reportUsage = (server: TestServer, token: string, subscriptionId: string, body: unknown) =>
  call(server, "POST", `/v1/subscriptions/${subscriptionId}/usage`, { token, body })

/** Every usage record of a subscription, newest first. */
export const usageRecords = async (server: TestServer, token: string, subscriptionId: string): Promise<Array<any>> => {
  const res = await call(server, "GET", `/v1/subscriptions/${subscriptionId}/usage?perPage=100`, { token })
  if (res.status !== 200) throw new Error(`listing usage answered ${res.status}: ${res.text}`)
  return res.json.data
}

export const eventsOf = (fake: FakeStripe, customer: string) => fake.events.filter((e) => e.customer === customer)

export const callsFor = (fake: FakeStripe, customer: string) =>
  fake.requests.filter((r) => r.form["payload[stripe_customer_id]"] === customer)
