import { Context, Effect, Exit, Layer, Redacted, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Contacts, ForwardingSettings, Subscriptions, type Tenant, Usage, UsageForwarder } from "@opsplatform/core"
import type { Fixture } from "@opsplatform/testing"
import { type FakeStripe, startFakeStripe } from "@opsplatform/testing/fakeStripe"
import { coreLive } from "../src/server/app.ts"
import type { DatabaseChoice } from "../src/server/database.ts"
import { StripePaymentProcessor } from "../src/server/stripe.ts"
import { assertBuilt, freePort, runCli, runCommand, spawnWorker, startServe } from "./support/cli.ts"
import { isolatedDatabase, testDatabases } from "./support/databases.ts"
import { callsFor, eventsOf, freshCustomer, meteringEnv, TEST_KEY, usageRecords } from "./support/metering.ts"
import { seedFixture, startTestServer, type TestServer } from "./support/server.ts"
import { testConfiguration } from "./support/config.ts"
import { eventually } from "./support/webhooks.ts"

/** Subscriptions for `customers` and `perCustomer` reports on each, through the server's own services. */
const seed = (server: TestServer, tenant: Tenant.Tenant, customers: ReadonlyArray<string>, perCustomer: number) =>
  server.run(Effect.gen(function*() {
    const contacts = yield* Contacts.Contacts
    const subscriptions = yield* Subscriptions.Subscriptions
    const usage = yield* Usage.Usage
    const made: Array<{ readonly id: string; readonly customer: string; readonly quantities: Array<number> }> = []
    for (const customer of customers) {
      const contact = yield* contacts.create(tenant, { name: `Customer ${customer}`, kind: "customer" })
      const sub = yield* subscriptions.create(tenant, {
        contact_id: contact.id,
        processor_customer_id: customer,
        meter_event_name: "api_requests"
      })
      const quantities: Array<number> = []
      for (let i = 0; i < perCustomer; i++) {
        quantities.push(i + 1)
        yield* usage.report(tenant, sub.id, { quantity: i + 1, identifier: `r-${i}` })
      }
      made.push({ id: sub.id, customer, quantities })
    }
    return made
  }))

/** Every identifier Stripe holds once, and the values it would bill add up to what was reported. */
const expectCountedOnce = (fake: FakeStripe, made: ReadonlyArray<{ customer: string; quantities: Array<number> }>) => {
  for (const m of made) {
    const events = eventsOf(fake, m.customer)
    expect(new Set(events.map((e) => e.identifier)).size).toBe(events.length)
    expect(events).toHaveLength(m.quantities.length)
    expect(events.reduce((sum, e) => sum + Number(e.value), 0)).toBe(m.quantities.reduce((a, b) => a + b, 0))
  }
}

/** A forwarder on its own connection pool, as another host would run it; stops when `close` runs. */
const startForwarder = async (choice: DatabaseChoice, fake: FakeStripe, name: string) => {
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(
    Layer.fresh(UsageForwarder.UsageForwarder.layer).pipe(
      Layer.provide(StripePaymentProcessor({
        apiBase: new URL(fake.url),
        keys: { sandbox: Redacted.make(TEST_KEY) },
        timeoutMs: 2_000,
        appName: name
      })),
      Layer.provide(Layer.succeed(ForwardingSettings.ForwardingSettings, {
        ...ForwardingSettings.defaultForwardingSettings,
        streams: 3,
        perStream: 5,
        pollIntervalMs: 50
      })),
      Layer.provideMerge(coreLive(choice)),
      Layer.provide(testConfiguration())
    ),
    scope
  ))
  await Effect.runPromise(Effect.forkIn(Context.get(context, UsageForwarder.UsageForwarder).run, scope))
  return { close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

// Forwarders in several processes need a PostgreSQL server: the embedded database serves one process.
for (const db of testDatabases().filter((d) => d.name === "postgres")) {
  describe("usage forwarders sharing PostgreSQL", () => {
    let server: TestServer
    let f: Fixture
    let isolated: Awaited<ReturnType<typeof isolatedDatabase>>
    const fakes: Array<FakeStripe> = []
    /** The database of this suite: a schema of its own, so no other file's forwarder takes its usage, nor it theirs. */
    const url = () => (isolated.choice as { readonly url: string }).url
    beforeAll(async () => {
      assertBuilt()
      isolated = await isolatedDatabase(db, "metering_workers")
      server = await startTestServer(isolated.choice)
      f = await seedFixture(server)
    }, 60_000)
    afterAll(async () => {
      await server.close()
      await Promise.all(fakes.map((x) => x.close()))
      await isolated.drop()
    })
    const fakeStripe = async (delayMs: number) => {
      const fake = await startFakeStripe({ apiKeys: [TEST_KEY], delayMs })
      fakes.push(fake)
      return fake
    }

    it("two forwarders on two pools send each of 240 records once, one call at a time per customer and meter", async () => {
      const fake = await fakeStripe(3)
      const made = await seed(server, f.sandbox, Array.from({ length: 8 }, () => freshCustomer("Two")), 30)
      const a = await startForwarder(isolated.choice, fake, "forwarder-a")
      const b = await startForwarder(isolated.choice, fake, "forwarder-b")
      try {
        await eventually(
          async () => made.reduce((n, m) => n + eventsOf(fake, m.customer).length, 0),
          (n) => n === 240,
          60_000
        )
      } finally {
        await a.close()
        await b.close()
      }
      expectCountedOnce(fake, made)
      expect(fake.overlaps()).toBe(0)
      const calls = made.flatMap((m) => callsFor(fake, m.customer))
      expect(calls).toHaveLength(240)
      const agents = new Set(calls.map((c) => String(c.headers["user-agent"]).split(" ").at(-1)))
      expect(agents).toEqual(new Set(["forwarder-a", "forwarder-b"]))
      for (const m of made) {
        const records = await usageRecords(server, f.tokens.sandbox, m.id)
        expect(records.map((r) => [r.forwarding_status, r.attempts])).toEqual(Array(30).fill(["delivered", 1]))
      }
    }, 120_000)

    it("a worker process killed with SIGKILL mid-batch loses nothing, and what it had in flight Stripe counts once", async () => {
      const fake = await fakeStripe(100)
      const made = await seed(server, f.sandbox, Array.from({ length: 3 }, () => freshCustomer("Kill")), 40)
      const env = {
        DATABASE_URL: url(),
        ...meteringEnv(fake, { OPSPLATFORM_METERING_LEASE_MS: "1500", OPSPLATFORM_METERING_PER_STREAM: "50" })
      }
      const count = () => made.reduce((n, m) => n + eventsOf(fake, m.customer).length, 0)
      const first = await spawnWorker(env, "usage forwarder started")
      await eventually(async () => count(), (n) => n >= 15, 60_000)
      first.child.kill("SIGKILL")
      expect(await first.exited).toBeNull()
      expect(count()).toBeLessThan(120)
      const second = await spawnWorker(env, "usage forwarder started")
      try {
        await eventually(async () => count(), (n) => n === 120, 90_000)
        await eventually(
          async () => (await Promise.all(made.map((m) => usageRecords(server, f.tokens.sandbox, m.id)))).flat(),
          (list) => list.length === 120 && list.every((r) => r.forwarding_status === "delivered"),
          30_000
        )
      } finally {
        second.child.kill("SIGTERM")
        expect(await second.exited).toBe(0)
      }
      expectCountedOnce(fake, made)
      expect(fake.overlaps()).toBe(0)
      // What the killed worker had under way counts as a call made, and was made again by the next one under the same
      // identifier: Stripe holds it once (a call that reached Stripe is refused the second time, as a duplicate).
      const all = (await Promise.all(made.map((m) => usageRecords(server, f.tokens.sandbox, m.id)))).flat()
      const resent = all.filter((r) => r.attempts >= 2)
      expect(resent.length).toBeGreaterThan(0)
      for (const r of resent) {
        const calls = fake.requests.filter((c) => c.form.identifier === r.id)
        expect(calls.length).toBeGreaterThanOrEqual(1)
        expect(calls.length).toBeLessThanOrEqual(r.attempts)
        expect(fake.events.filter((e) => e.identifier === r.id)).toHaveLength(1)
        if (calls.length === 2) expect(r.last_error).toBe(`An event already exists with identifier ${r.id}.`)
      }
    }, 180_000)

    it("opsplatform jobs run usage forwards what is due once and prints what it did", async () => {
      const fake = await fakeStripe(0)
      const made = await seed(server, f.sandbox, [freshCustomer("Cli")], 3)
      const res = await runCli(["jobs", "run", "usage"], { DATABASE_URL: url(), ...meteringEnv(fake) })
      expect(res.code, res.stderr).toBe(0)
      const summary = JSON.parse(res.stdout.trim().split("\n").pop()!)
      expect(summary).toEqual({ calls: expect.any(Number), delivered: expect.any(Number), retrying: 0, failed: expect.any(Number) })
      expect(summary.delivered).toBeGreaterThanOrEqual(3)
      expectCountedOnce(fake, made)
      expect((await usageRecords(server, f.tokens.sandbox, made[0]!.id)).map((r) => r.forwarding_status)).toEqual(Array(3).fill("delivered"))
      // Nothing of it is due any more: a second run sends it nothing.
      const again = await runCommand(["jobs", "run", "usage"], { DATABASE_URL: url(), ...meteringEnv(fake) })
      expect(again.code, again.stderr).toBe(0)
      expect(callsFor(fake, made[0]!.customer)).toHaveLength(3)
    }, 60_000)

    it("opsplatform worker refuses a Stripe key of the wrong mode, naming the variable and not the key", async () => {
      const res = await runCommand(["worker"], {
        DATABASE_URL: url(),
        OPSPLATFORM_STRIPE_TEST_KEY: "sk_live_not_for_the_sandbox_1234"
      })
      expect(res.code).toBe(1)
      expect(res.stderr).toContain("OPSPLATFORM_STRIPE_TEST_KEY must be a Stripe secret key starting with sk_test_ or rk_test_")
      expect(res.stderr).not.toContain("sk_live_not_for_the_sandbox_1234")
    }, 60_000)
  })
}

describe("the forwarder of the CLI on the embedded database", () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "opsplatform-metering-"))
  const env = { OPSPLATFORM_DATA_DIR: dataDir, DATABASE_URL: undefined, OPSPLATFORM_SECRET_KEY: undefined }
  let fake: FakeStripe
  beforeAll(async () => {
    assertBuilt()
    fake = await startFakeStripe({ apiKeys: [TEST_KEY] })
  })
  afterAll(async () => {
    await fake.close()
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  it("serve keeps usage pending without a key; jobs run usage sends it once a key is given", async () => {
    const json = (text: string) => JSON.parse(text.trim().split("\n").pop()!)
    const customer = freshCustomer("Embedded")
    // The first start on an empty database prints a demo organization's keys (every scope).
    const serving = await startServe(await freePort(), env)
    const demo = json(serving.stdout()).demo
    const headers = { authorization: `Bearer ${demo.sandbox_api_key}`, "content-type": "application/json" }
    const post = async (url: string, body: unknown) => {
      const res = await fetch(`${serving.url}${url}`, { method: "POST", headers, body: JSON.stringify(body) })
      return { status: res.status, text: await res.text() }
    }
    const contact = JSON.parse((await post("/v1/contacts", { name: "Client", kind: "customer" })).text).data
    const sub = JSON.parse((await post("/v1/subscriptions", {
      contact_id: contact.id,
      processor_customer_id: customer,
      meter_event_name: "api_requests"
    })).text).data
    expect(await post(`/v1/subscriptions/${sub.id}/usage`, { quantity: 4, identifier: "a" })).toEqual({ status: 200, text: "" })
    expect(await post(`/v1/subscriptions/${sub.id}/usage`, { quantity: 6 })).toEqual({ status: 200, text: "" })
    expect(serving.stderr()).toContain("usage records wait as pending")
    serving.child.kill("SIGTERM")
    expect(await serving.exited).toBe(0)

    const run = await runCommand(["jobs", "run", "usage"], { ...env, ...meteringEnv(fake) })
    expect(run.code, run.stderr).toBe(0)
    expect(json(run.stdout)).toEqual({ calls: 2, delivered: 2, retrying: 0, failed: 0 })
    expect(eventsOf(fake, customer).map((e) => e.value).sort()).toEqual(["4", "6"])
  }, 180_000)
})
