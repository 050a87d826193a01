import { assert, describe, layer } from "@effect/vitest"
import { Clock, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { DeliveryRepo, Pagination, WebhookTransport, Webhooks } from "@opsplatform/core"
import type { StoredSecret } from "@opsplatform/core/webhooks/model"
import { makeFixture, MemoryCore, MemoryStore } from "@opsplatform/testing"

/** DNS as the port answers it: one name points inside the network. */
const Resolver = Layer.succeed(
  WebhookTransport.WebhookTransport,
  WebhookTransport.WebhookTransport.of({
    send: () => Effect.fail({ _tag: "TransportFailure", message: "not sending in this test" }),
    resolve: (host) =>
      host === "internal.example.com"
        ? Effect.succeed(["93.184.215.14", "10.0.0.5"])
        : host === "unresolvable.example.com"
        ? Effect.fail({ _tag: "TransportFailure", message: "ENOTFOUND" })
        : Effect.succeed(["93.184.215.14"])
  })
)

describe("the Webhooks service on memory storage", () => {
  layer(MemoryCore({ webhookTransport: Resolver }))((it) => {
    it.effect("refuses a name that resolves to a private address when saved, and accepts one that does not resolve yet", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const webhooks = yield* Webhooks.Webhooks
        const refused = yield* Effect.flip(webhooks.create(f.live, { url: "https://internal.example.com/x", event_types: ["invoice.paid"] }))
        assert.strictEqual(refused._tag, "ValidationFailed")
        assert.deepStrictEqual(refused.details, [{ field: "url", issue: "resolves to a loopback, private, link-local or multicast address" }])
        const later = yield* webhooks.create(f.live, { url: "https://unresolvable.example.com/x", event_types: ["invoice.paid"] })
        assert.strictEqual(later.url, "https://unresolvable.example.com/x")
        const moved = yield* Effect.flip(webhooks.update(f.live, later.id, { url: "https://internal.example.com/y" }))
        assert.strictEqual(moved._tag, "ValidationFailed")
      }))

    it.effect("stores the secret sealed, and reports the previous one's expiry only while it lasts", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const webhooks = yield* Webhooks.Webhooks
        const store = yield* MemoryStore
        const created = yield* webhooks.create(f.live, { url: "https://hooks.example.com/", event_types: ["invoice.paid"] })
        const rows = () => [...store.table<StoredSecret>("webhook_secrets").values()].filter((s) => s.subscription_id === created.id)
        assert.strictEqual(rows().length, 1)
        assert.notInclude(rows()[0]!.sealed, created.secret!.slice(6))
        const rotated = yield* webhooks.rotateSecret(f.live, created.id, { grace_period_seconds: 3600 })
        assert.strictEqual(rotated.previous_secret_expires_at, new Date(3_600_000).toISOString())
        assert.strictEqual((yield* webhooks.get(f.live, created.id)).previous_secret_expires_at, rotated.previous_secret_expires_at)
        yield* TestClock.adjust("3601 seconds")
        assert.isNull((yield* webhooks.get(f.live, created.id)).previous_secret_expires_at)
        for (const secret of rows()) for (const plain of [created.secret!, rotated.secret!]) assert.notInclude(secret.sealed, plain.slice(6))
      }))

    it.effect("redeliver follows the rules, a disabled subscription refuses tests and redeliveries, and foreign ids are not found", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const other = yield* makeFixture()
        const webhooks = yield* Webhooks.Webhooks
        const deliveries = yield* DeliveryRepo.DeliveryRepo
        const sub = yield* webhooks.create(f.live, { url: "https://hooks.example.com/", event_types: ["invoice.paid"] })
        const ping = yield* webhooks.sendTest(f.live, sub.id)
        const now = yield* Clock.currentTimeMillis
        const claimed = yield* deliveries.claim({
          now: new Date(now + 1000).toISOString(),
          limit: 10,
          leaseUntil: new Date(now + 61_000).toISOString(),
          claimToken: "00000000-0000-4000-8000-0000000000cc"
        })
        assert.deepStrictEqual(claimed.map((c) => c.id), [ping.delivery_id])
        const inFlight = yield* Effect.flip(webhooks.redeliver(f.live, sub.id, ping.delivery_id, { force: true }))
        assert.strictEqual(inFlight._tag, "Conflict")
        yield* deliveries.record([{
          id: ping.delivery_id,
          claimToken: claimed[0]!.claimToken,
          status: "succeeded",
          attempts: 1,
          nextAttemptAt: null,
          lastAttemptAt: new Date(now + 1000).toISOString(),
          lastStatusCode: 200,
          lastError: null,
          log: [],
          disableSubscription: false
        }], new Date(now + 1000).toISOString())
        const unforced = yield* Effect.flip(webhooks.redeliver(f.live, sub.id, ping.delivery_id, {}))
        assert.strictEqual(unforced._tag, "Conflict")
        yield* webhooks.redeliver(f.live, sub.id, ping.delivery_id, { force: true })
        const again = yield* webhooks.getDelivery(f.live, sub.id, ping.delivery_id)
        assert.deepStrictEqual([again.status, again.attempt_count], ["pending", 1])
        assert.strictEqual((yield* Effect.flip(webhooks.getDelivery(other.live, sub.id, ping.delivery_id)))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(webhooks.redeliver(f.sandbox, sub.id, ping.delivery_id, {})))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(webhooks.rotateSecret(other.live, sub.id, {})))._tag, "NotFound")
        assert.strictEqual(
          (yield* Effect.flip(webhooks.listDeliveries(other.live, sub.id, {}, yield* Pagination.pageRequest({}))))._tag,
          "NotFound"
        )
        yield* webhooks.update(f.live, sub.id, { enabled: false })
        assert.strictEqual((yield* Effect.flip(webhooks.sendTest(f.live, sub.id)))._tag, "Conflict")
        assert.strictEqual((yield* Effect.flip(webhooks.redeliver(f.live, sub.id, ping.delivery_id, {})))._tag, "Conflict")
      }))
  })
})
