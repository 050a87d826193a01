import { assert, describe, layer } from "@effect/vitest"
import { Clock, Effect, type Layer, Option } from "effect"
import type { CoreLayers } from "@opsplatform/core"
import { freshEventId } from "@opsplatform/core/events/catalog"
import { Outbox } from "@opsplatform/core/events/Outbox"
import { Ids, newId } from "@opsplatform/core/shared/Ids"
import { pageRequest } from "@opsplatform/core/shared/pagination"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { isoFromMillis as iso } from "@opsplatform/core/shared/time"
import { Transactor } from "@opsplatform/core/shared/Transactor"
import { DeliveryRepo } from "@opsplatform/core/webhooks/DeliveryRepo"
import { publishTo } from "@opsplatform/core/webhooks/fanOut"
import {
  type AttemptRecord,
  type DeliveryOutcome,
  INLINE_ATTEMPTS,
  PortalSessionId,
  type StoredPortalSession,
  type StoredSubscription,
  WebhookAttemptId,
  type WebhookDeliveryId,
  WebhookSecretId,
  WebhookSubscriptionId
} from "@opsplatform/core/webhooks/model"
import { PortalSessionRepo } from "@opsplatform/core/webhooks/PortalSessionRepo"
import { WebhookRepo } from "@opsplatform/core/webhooks/WebhookRepo"
import { freshOrganization } from "./support.ts"

const HOUR = 3_600_000

const subscription = (id: string, at: string, overrides: Partial<StoredSubscription> = {}): StoredSubscription => ({
  id: WebhookSubscriptionId.make(id),
  url: `https://hooks.example.com/${id.slice(-6)}`,
  description: null,
  event_types: ["fleet_vehicle.created"],
  enabled: true,
  disabled_reason: null,
  signing_scheme: "v1",
  public_key: null,
  created_at: at,
  updated_at: at,
  latest_secret_expiry: null,
  ...overrides
})

/** A subscription with a current secret, straight through the ports. */
const subscribed = (tenant: Tenant, overrides: Partial<StoredSubscription> = {}) =>
  Effect.gen(function*() {
    const repo = yield* WebhookRepo
    const ids = yield* Ids
    const at = iso(yield* Clock.currentTimeMillis)
    const s = subscription(yield* ids.uuid, at, overrides)
    yield* repo.insert(tenant, s)
    const secretId = yield* newId(ids, WebhookSecretId)
    yield* repo.insertSecret(tenant, {
      id: secretId,
      subscription_id: s.id,
      scheme: "v1",
      sealed: `sealed-${secretId}`,
      public_key: null,
      created_at: at,
      expires_at: null
    })
    return { ...s, secretId }
  })

const publish = (tenant: Tenant, type = "fleet_vehicle.created") =>
  Effect.gen(function*() {
    const outbox = yield* Outbox
    const ids = yield* Ids
    const tx = yield* Transactor
    const eventId = freshEventId(yield* ids.uuid)
    yield* tx.withTransaction(outbox.publish(tenant, { eventId, type, data: { id: "v-1", plate: "B-1" } }))
    return eventId
  })

/** The delivery of an event to a subscription, through the list the API reads. */
const deliveryOf = (tenant: Tenant, subscriptionId: WebhookSubscriptionId, eventId: string) =>
  Effect.gen(function*() {
    const repo = yield* DeliveryRepo
    const page = yield* repo.list(tenant, subscriptionId, {}, yield* pageRequest({ perPage: 100 }))
    return page.items.find((d) => d.event_id === eventId)
  })

const claimAt = (now: number, limit = 100) =>
  Effect.gen(function*() {
    const repo = yield* DeliveryRepo
    const ids = yield* Ids
    const claimToken = yield* ids.uuid
    const claimed = yield* repo.claim({ now: iso(now), limit, leaseUntil: iso(now + 60_000), claimToken })
    return claimed
  })

const outcome = (
  claimed: { readonly id: WebhookDeliveryId; readonly claimToken: string; readonly attemptNumber: number },
  at: number,
  overrides: Partial<DeliveryOutcome> = {},
  attemptId = "00000000-0000-4000-8000-000000000000"
): DeliveryOutcome => {
  const log: AttemptRecord = {
    id: WebhookAttemptId.make(attemptId),
    delivery_id: claimed.id,
    number: claimed.attemptNumber,
    created_at: iso(at),
    status_code: 500,
    duration_ms: 12,
    error: null,
    response_body: "nope",
    next_attempt_at: iso(at + HOUR)
  }
  return {
    id: claimed.id,
    claimToken: claimed.claimToken,
    status: "failed",
    attempts: 1,
    nextAttemptAt: iso(at + HOUR),
    lastAttemptAt: iso(at),
    lastStatusCode: 500,
    lastError: null,
    log: [log],
    disableSubscription: false,
    ...overrides
  }
}

/**
 * The webhook storage contract (WebhookRepo, DeliveryRepo and the Outbox's
 * fan-out). Claims are global across tenants, as workers are: run it on
 * storage no worker shares. Each test removes its subscriptions (and with
 * them their deliveries), so later claims see only their own rows.
 */
export const webhookStorageConformance = (
  name: string,
  storage: Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>
) =>
  describe(`Webhook storage conformance: ${name}`, () => {
    layer(storage, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("keeps subscriptions per organization environment", () =>
        Effect.gen(function*() {
          const repo = yield* WebhookRepo
          const a = yield* freshOrganization
          const b = yield* freshOrganization
          const s = yield* subscribed(a.live, { description: "ERP", event_types: ["invoice.paid", "invoice.credited"] })
          const found = Option.getOrThrow(yield* repo.find(a.live, s.id))
          assert.deepStrictEqual(found.event_types, ["invoice.paid", "invoice.credited"])
          assert.strictEqual(found.description, "ERP")
          assert.strictEqual(found.latest_secret_expiry, null)
          assert.isTrue(Option.isNone(yield* repo.find(a.sandbox, s.id)))
          assert.isTrue(Option.isNone(yield* repo.find(b.live, s.id)))
          assert.isFalse(yield* repo.remove(b.live, s.id))
          yield* repo.update(b.live, { ...found, url: "https://hijack.example.com/" })
          assert.strictEqual(Option.getOrThrow(yield* repo.find(a.live, s.id)).url, s.url)
          yield* repo.update(a.live, { ...found, enabled: false, disabled_reason: "by_request", event_types: ["invoice.paid"] })
          const changed = Option.getOrThrow(yield* repo.find(a.live, s.id))
          assert.deepStrictEqual([changed.enabled, changed.disabled_reason, changed.event_types], [false, "by_request", ["invoice.paid"]])
          const second = yield* subscribed(a.live)
          const listed = yield* repo.list(a.live, yield* pageRequest({ perPage: 1 }))
          assert.strictEqual(listed.meta.total, 2)
          assert.deepStrictEqual(listed.items.map((x) => x.id), [second.id])
          assert.strictEqual((yield* repo.list(a.sandbox, yield* pageRequest({}))).meta.total, 0)
          assert.isTrue(yield* repo.remove(a.live, s.id))
          assert.isTrue(yield* repo.remove(a.live, second.id))
          assert.isTrue(Option.isNone(yield* repo.find(a.live, s.id)))
        }))

      it.effect("rotation retires every older secret by its deadline, keeps a bounded few, and signs with the valid ones newest first", () =>
        Effect.gen(function*() {
          const repo = yield* WebhookRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const s = yield* subscribed(org.live)
          const now = yield* Clock.currentTimeMillis
          const secret = (id: WebhookSecretId, offset: number) => ({
            id,
            subscription_id: s.id,
            scheme: "v1" as const,
            sealed: `sealed-${id}`,
            public_key: null,
            created_at: iso(now + offset),
            expires_at: null
          })
          yield* repo.retireSecrets(org.live, s.id, iso(now + 24 * HOUR), iso(now), 2)
          const second = yield* newId(ids, WebhookSecretId)
          yield* repo.insertSecret(org.live, secret(second, 1000))
          assert.deepStrictEqual((yield* repo.activeSecrets(org.live, s.id, iso(now + 2000))).map((x) => x.id), [second, s.secretId])
          assert.strictEqual(Option.getOrThrow(yield* repo.find(org.live, s.id)).latest_secret_expiry, iso(now + 24 * HOUR))
          assert.deepStrictEqual((yield* repo.activeSecrets(org.live, s.id, iso(now + 25 * HOUR))).map((x) => x.id), [second])
          // A shorter grace pulls every older deadline in.
          yield* repo.retireSecrets(org.live, s.id, iso(now + HOUR), iso(now + 2000), 2)
          const third = yield* newId(ids, WebhookSecretId)
          yield* repo.insertSecret(org.live, secret(third, 3000))
          assert.deepStrictEqual((yield* repo.activeSecrets(org.live, s.id, iso(now + 4000))).map((x) => x.id), [third, second, s.secretId])
          assert.deepStrictEqual((yield* repo.activeSecrets(org.live, s.id, iso(now + 2 * HOUR))).map((x) => x.id), [third])
          // Beyond the kept few, older secrets go at once.
          yield* repo.retireSecrets(org.live, s.id, iso(now + HOUR), iso(now + 4000), 2)
          const fourth = yield* newId(ids, WebhookSecretId)
          yield* repo.insertSecret(org.live, secret(fourth, 5000))
          assert.deepStrictEqual((yield* repo.activeSecrets(org.live, s.id, iso(now + 6000))).map((x) => x.id), [fourth, third, second])
          yield* repo.remove(org.live, s.id)
        }))

      it.effect("a change of scheme is a rotation: the subscription takes its current key's scheme and public key, the claim carries both kinds", () =>
        Effect.gen(function*() {
          const repo = yield* WebhookRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const s = yield* subscribed(org.live)
          const now = yield* Clock.currentTimeMillis
          const found = Option.getOrThrow(yield* repo.find(org.live, s.id))
          assert.deepStrictEqual([found.signing_scheme, found.public_key], ["v1", null])
          yield* repo.retireSecrets(org.live, s.id, iso(now + 24 * HOUR), iso(now), 2)
          const keyId = yield* newId(ids, WebhookSecretId)
          const publicKey = "whpk_" + "A".repeat(43) + "="
          yield* repo.insertSecret(org.live, {
            id: keyId,
            subscription_id: s.id,
            scheme: "v1a",
            sealed: `sealed-${keyId}`,
            public_key: publicKey,
            created_at: iso(now + 1000),
            expires_at: null
          })
          const rotated = Option.getOrThrow(yield* repo.find(org.live, s.id))
          assert.deepStrictEqual(
            [rotated.signing_scheme, rotated.public_key, rotated.latest_secret_expiry],
            ["v1a", publicKey, iso(now + 24 * HOUR)]
          )
          const listed = (yield* repo.list(org.live, yield* pageRequest({ perPage: 100 }))).items.find((x) => x.id === s.id)!
          assert.deepStrictEqual([listed.signing_scheme, listed.public_key], ["v1a", publicKey])
          const active = yield* repo.activeSecrets(org.live, s.id, iso(now + 2000))
          assert.deepStrictEqual(
            active.map((k) => [k.id, k.scheme, k.public_key, k.expires_at]),
            [[keyId, "v1a", publicKey, null], [s.secretId, "v1", null, iso(now + 24 * HOUR)]]
          )
          const eventId = yield* publish(org.live)
          const claimed = (yield* claimAt(now + 2000)).find((c) => c.eventId === eventId)!
          assert.deepStrictEqual(claimed.secrets, [
            { id: keyId, scheme: "v1a", sealed: `sealed-${keyId}` },
            { id: s.secretId, scheme: "v1", sealed: `sealed-${s.secretId}` }
          ])
          // Past the overlap only the v1a key signs.
          const later = (yield* claimAt(now + 25 * HOUR)).find((c) => c.eventId === eventId)!
          assert.deepStrictEqual(later.secrets.map((k) => k.scheme), ["v1a"])
          yield* repo.remove(org.live, s.id)
        }))

      it.effect("publish fans out to the tenant's enabled subscriptions of the type, once per event id, inside the transaction", () =>
        Effect.gen(function*() {
          const repo = yield* WebhookRepo
          const outbox = yield* Outbox
          const tx = yield* Transactor
          const ids = yield* Ids
          const org = yield* freshOrganization
          const other = yield* freshOrganization
          const wanted = yield* subscribed(org.live)
          const alsoWanted = yield* subscribed(org.live, { event_types: ["invoice.paid", "fleet_vehicle.created"] })
          const disabled = yield* subscribed(org.live, { enabled: false, disabled_reason: "by_request" })
          const otherType = yield* subscribed(org.live, { event_types: ["fleet_vehicle.deleted"] })
          const sandbox = yield* subscribed(org.sandbox)
          const foreign = yield* subscribed(other.live)
          const eventId = yield* publish(org.live)
          yield* outbox.publish(org.live, { eventId, type: "fleet_vehicle.created", data: { id: "again" } })
          for (const s of [wanted, alsoWanted]) {
            const d = yield* deliveryOf(org.live, s.id, eventId)
            assert.isDefined(d, `delivery for ${s.id}`)
            assert.deepStrictEqual(
              [d!.status, d!.event_type, d!.attempt_count, d!.attempts.length],
              ["pending", "fleet_vehicle.created", 0, 0]
            )
          }
          for (const [s, tenant] of [[disabled, org.live], [otherType, org.live], [sandbox, org.sandbox], [foreign, other.live]] as const) {
            assert.isUndefined(yield* deliveryOf(tenant, s.id, eventId))
          }
          // Rolled back with the change that caused it: no event, no delivery.
          const doomed = freshEventId(yield* ids.uuid)
          yield* tx.withTransaction(
            Effect.andThen(outbox.publish(org.live, { eventId: doomed, type: "fleet_vehicle.created", data: {} }), Effect.fail("no"))
          ).pipe(Effect.ignore)
          assert.isUndefined(yield* deliveryOf(org.live, wanted.id, doomed))
          // publishTo reaches one subscription of the tenant whatever its types, and no other tenant's.
          const ping = freshEventId(yield* ids.uuid)
          const to = yield* publishTo(org.live, { eventId: ping, type: "webhook.test", data: {} }, otherType.id)
          const pinged = yield* deliveryOf(org.live, otherType.id, ping)
          assert.strictEqual(Option.getOrThrow(to).deliveryId, pinged!.id)
          assert.strictEqual(JSON.parse(Option.getOrThrow(to).payload).id, ping)
          assert.isUndefined(yield* deliveryOf(org.live, wanted.id, ping))
          const stray = yield* publishTo(org.live, { eventId: freshEventId(yield* ids.uuid), type: "webhook.test", data: {} }, foreign.id)
          assert.isTrue(Option.isNone(stray))
          for (const s of [wanted, alsoWanted, disabled, otherType]) yield* repo.remove(org.live, s.id)
          yield* repo.remove(org.sandbox, sandbox.id)
          yield* repo.remove(other.live, foreign.id)
        }))

      it.effect("claim leases each due delivery to one worker, with its payload and valid secrets, and hands it over when the lease runs out", () =>
        Effect.gen(function*() {
          const repo = yield* WebhookRepo
          const deliveries = yield* DeliveryRepo
          const org = yield* freshOrganization
          const s = yield* subscribed(org.live)
          const off = yield* subscribed(org.live)
          const eventId = yield* publish(org.live)
          const d = (yield* deliveryOf(org.live, s.id, eventId))!
          const offDelivery = (yield* deliveryOf(org.live, off.id, eventId))!
          yield* repo.update(org.live, { ...Option.getOrThrow(yield* repo.find(org.live, off.id)), enabled: false, disabled_reason: "by_request" })
          const now = (yield* Clock.currentTimeMillis) + 1000
          const first = yield* claimAt(now)
          const mine = first.find((c) => c.id === d.id)!
          assert.isDefined(mine)
          assert.isUndefined(first.find((c) => c.id === offDelivery.id), "a disabled subscription's delivery waits")
          assert.deepStrictEqual(
            [mine.url, mine.eventId, mine.eventType, mine.attempts, mine.attemptNumber, mine.reclaimed],
            [s.url, eventId, "fleet_vehicle.created", 0, 1, false]
          )
          assert.deepStrictEqual(mine.tenant, org.live)
          assert.deepStrictEqual(mine.secrets, [{ id: s.secretId, scheme: "v1", sealed: `sealed-${s.secretId}` }])
          const body = JSON.parse(mine.payload)
          assert.deepStrictEqual(
            { id: body.id, type: body.type, environment: body.environment, data: body.data },
            { id: eventId, type: "fleet_vehicle.created", environment: "live", data: { id: "v-1", plate: "B-1", organizationId: org.id } }
          )
          assert.isTrue(Number.isInteger(body.created))
          assert.strictEqual((yield* deliveryOf(org.live, s.id, eventId))!.status, "sending")
          // Leased: no other claim gets it until the lease runs out.
          assert.isUndefined((yield* claimAt(now + 59_000)).find((c) => c.id === d.id))
          const taken = (yield* claimAt(now + 61_000)).find((c) => c.id === d.id)!
          assert.deepStrictEqual([taken.reclaimed, taken.attemptNumber, taken.attempts], [true, 2, 0])
          assert.notStrictEqual(taken.claimToken, mine.claimToken)
          // Not due yet: not claimed.
          yield* deliveries.record([outcome(taken, now + 61_000, { nextAttemptAt: iso(now + 10 * HOUR) }, yield* (yield* Ids).uuid)], iso(now))
          assert.isUndefined((yield* claimAt(now + 9 * HOUR)).find((c) => c.id === d.id))
          assert.isDefined((yield* claimAt(now + 11 * HOUR)).find((c) => c.id === d.id))
          yield* repo.remove(org.live, s.id)
          yield* repo.remove(org.live, off.id)
        }))

      it.effect("record moves the state only under the recorder's lease, logs each attempt number once, and disables on 410", () =>
        Effect.gen(function*() {
          const repo = yield* WebhookRepo
          const deliveries = yield* DeliveryRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const s = yield* subscribed(org.live)
          const eventId = yield* publish(org.live)
          const now = (yield* Clock.currentTimeMillis) + 1000
          const first = (yield* claimAt(now)).find((c) => c.eventId === eventId)!
          const second = (yield* claimAt(now + 61_000)).find((c) => c.id === first.id)!
          // The first worker lost its lease: its attempt is logged, the state stays the new holder's.
          yield* deliveries.record([outcome(first, now, { status: "succeeded", lastStatusCode: 200 }, yield* ids.uuid)], iso(now + 62_000))
          let d = (yield* deliveryOf(org.live, s.id, eventId))!
          assert.strictEqual(d.status, "sending")
          assert.deepStrictEqual(d.attempts.map((a) => a.number), [1])
          // The holder records the lost attempt again (ignored: number 1 is logged) and its own.
          const lost = { ...outcome(second, now + 61_000).log[0]!, id: yield* newId(ids, WebhookAttemptId), number: 1, error: "lost" }
          const own = { ...outcome(second, now + 61_000).log[0]!, id: yield* newId(ids, WebhookAttemptId), status_code: 410 }
          yield* deliveries.record([
            outcome(second, now + 61_000, {
              status: "dead",
              attempts: 2,
              nextAttemptAt: null,
              lastStatusCode: 410,
              lastError: "gone",
              log: [lost, own],
              disableSubscription: true
            })
          ], iso(now + 62_000))
          d = (yield* deliveryOf(org.live, s.id, eventId))!
          assert.deepStrictEqual(
            [d.status, d.next_attempt_at, d.last_status_code, d.last_error, d.attempt_count],
            ["dead", null, 410, "gone", 2]
          )
          assert.deepStrictEqual(d.attempts.map((a) => [a.number, a.status_code, a.error]), [[2, 410, null], [1, 500, null]])
          assert.deepStrictEqual(d.attempts[0], {
            number: 2,
            attempted_at: iso(now + 61_000),
            status_code: 410,
            duration_ms: 12,
            error: null,
            response_body: "nope",
            next_attempt_at: iso(now + 61_000 + HOUR)
          })
          const sub = Option.getOrThrow(yield* repo.find(org.live, s.id))
          assert.deepStrictEqual([sub.enabled, sub.disabled_reason], [false, "endpoint_gone"])
          yield* repo.remove(org.live, s.id)
        }))

      it.effect("portal sessions: a link is claimed once, found by its hashes, revoked by its tenant only, purged after expiry", () =>
        Effect.gen(function*() {
          const repo = yield* PortalSessionRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const other = yield* freshOrganization
          const now = yield* Clock.currentTimeMillis
          const tag = yield* ids.uuid
          const session: StoredPortalSession = {
            id: yield* newId(ids, PortalSessionId),
            organization_id: org.live.organizationId,
            environment: "live",
            link_hash: `link-${tag}`,
            cookie_hash: null,
            read_only: true,
            event_types: ["fleet_vehicle.created"],
            frame_ancestors: ["https://app.example.com"],
            theme: { accent_color: "#0055aa", color_scheme: "dark" },
            created_at: iso(now),
            expires_at: iso(now + HOUR),
            exchanged_at: null,
            revoked_at: null
          }
          yield* repo.insert(org.live, session)
          assert.deepStrictEqual(yield* repo.findByLinkHash(session.link_hash), Option.some(session))
          // Past its expiry the link is not claimed.
          assert.isTrue(Option.isNone(yield* repo.claimLink(session.link_hash, `cookie-x-${tag}`, iso(now + HOUR))))
          const claimed = yield* repo.claimLink(session.link_hash, `cookie-${tag}`, iso(now + 1000))
          const opened = { ...session, cookie_hash: `cookie-${tag}`, exchanged_at: iso(now + 1000) }
          assert.deepStrictEqual(claimed, Option.some(opened))
          assert.isTrue(Option.isNone(yield* repo.claimLink(session.link_hash, `cookie-y-${tag}`, iso(now + 2000))))
          assert.deepStrictEqual(yield* repo.findByCookieHash(`cookie-${tag}`), Option.some(opened))
          assert.isTrue(Option.isNone(yield* repo.findByCookieHash(`cookie-y-${tag}`)))
          // Another organization, or the other environment, cannot revoke it.
          assert.isFalse(yield* repo.revoke(other.live, session.id, iso(now + 3000)))
          assert.isFalse(yield* repo.revoke(org.sandbox, session.id, iso(now + 3000)))
          assert.isTrue(yield* repo.revoke(org.live, session.id, iso(now + 3000)))
          assert.isFalse(yield* repo.revoke(org.live, session.id, iso(now + 4000)))
          assert.strictEqual(Option.getOrThrow(yield* repo.findByCookieHash(`cookie-${tag}`)).revoked_at, iso(now + 3000))
          assert.isAtLeast(yield* repo.purgeExpired(iso(now + HOUR)), 1)
          assert.isTrue(Option.isNone(yield* repo.findByLinkHash(session.link_hash)))
        }))

      it.effect("the delivery log filters by event type and by a half-open range of creation instants", () =>
        Effect.gen(function*() {
          const repo = yield* WebhookRepo
          const deliveries = yield* DeliveryRepo
          const org = yield* freshOrganization
          const s = yield* subscribed(org.live, { event_types: ["fleet_vehicle.created", "fleet_vehicle.deleted"] })
          const created = yield* publish(org.live, "fleet_vehicle.created")
          const deleted = yield* publish(org.live, "fleet_vehicle.deleted")
          const listed = (filter: Parameters<typeof deliveries.list>[2]) =>
            Effect.flatMap(pageRequest({}), (page) => deliveries.list(org.live, s.id, filter, page)).pipe(
              Effect.map((p) => p.items.map((d) => d.event_id).sort())
            )
          assert.deepStrictEqual(yield* listed({ event_type: "fleet_vehicle.deleted" }), [deleted])
          assert.deepStrictEqual(yield* listed({ event_type: "invoice.paid" }), [])
          const all = (yield* deliveries.list(org.live, s.id, {}, yield* pageRequest({}))).items
          const first = all.find((d) => d.event_id === created)!.created_at
          const last = all.find((d) => d.event_id === deleted)!.created_at
          const after = (at: string) => iso(Date.parse(at) + 1)
          assert.deepStrictEqual(yield* listed({ created_from: first }), [created, deleted].sort())
          assert.deepStrictEqual(yield* listed({ created_before: first }), [])
          assert.deepStrictEqual(yield* listed({ created_from: after(last) }), [])
          assert.deepStrictEqual(yield* listed({ created_before: after(first), event_type: "fleet_vehicle.created" }), [created])
          yield* repo.remove(org.live, s.id)
        }))

      it.effect("reset redelivers only from the status it saw; lists filter by status and page attempts", () =>
        Effect.gen(function*() {
          const repo = yield* WebhookRepo
          const deliveries = yield* DeliveryRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const s = yield* subscribed(org.live)
          const a = yield* publish(org.live)
          const b = yield* publish(org.live)
          const da = (yield* deliveryOf(org.live, s.id, a))!
          const db = (yield* deliveryOf(org.live, s.id, b))!
          const now = (yield* Clock.currentTimeMillis) + 1000
          // `b` waits until much later.
          assert.isTrue(yield* deliveries.reset(org.live, db.id, "pending", iso(now + 1000 * HOUR)))
          // Twelve attempts of `a`, each claimed and failed, so the log outgrows the inline window.
          for (let i = 0; i < INLINE_ATTEMPTS + 2; i++) {
            const at = now + i * 2 * HOUR
            const c = (yield* claimAt(at)).find((x) => x.id === da.id)!
            yield* deliveries.record([outcome(c, at, { attempts: i + 1 }, yield* ids.uuid)], iso(at))
          }
          const failed = yield* deliveries.list(org.live, s.id, { status: "failed" }, yield* pageRequest({}))
          assert.deepStrictEqual(failed.items.map((d) => d.id), [da.id])
          assert.strictEqual(failed.items[0]!.attempts.length, INLINE_ATTEMPTS)
          assert.strictEqual(failed.items[0]!.attempts[0]!.number, INLINE_ATTEMPTS + 2)
          const pending = yield* deliveries.list(org.live, s.id, { status: "pending" }, yield* pageRequest({}))
          assert.deepStrictEqual(pending.items.map((d) => d.id), [db.id])
          assert.strictEqual((yield* deliveries.list(org.sandbox, s.id, {}, yield* pageRequest({}))).meta.total, 0)
          assert.isTrue(Option.isNone(yield* deliveries.find(org.sandbox, s.id, da.id)))
          const firstPage = yield* deliveries.listAttempts(org.live, da.id, yield* pageRequest({ perPage: 5 }))
          assert.strictEqual(firstPage.meta.total, INLINE_ATTEMPTS + 2)
          assert.deepStrictEqual(firstPage.items.map((x) => x.number), [12, 11, 10, 9, 8])
          const next = yield* deliveries.listAttempts(org.live, da.id, yield* pageRequest({ perPage: 5, cursor: firstPage.meta.nextCursor! }))
          assert.deepStrictEqual(next.items.map((x) => x.number), [7, 6, 5, 4, 3])
          // Reset from what it saw only.
          assert.isFalse(yield* deliveries.reset(org.live, da.id, "dead", iso(now)))
          assert.isFalse(yield* deliveries.reset(org.sandbox, da.id, "failed", iso(now)))
          assert.isTrue(yield* deliveries.reset(org.live, da.id, "failed", iso(now)))
          const reset = Option.getOrThrow(yield* deliveries.find(org.live, s.id, da.id))
          assert.deepStrictEqual([reset.status, reset.next_attempt_at, reset.attempt_count], ["pending", iso(now), INLINE_ATTEMPTS + 2])
          const again = (yield* claimAt(now + 1)).find((x) => x.id === da.id)!
          assert.deepStrictEqual([again.attempts, again.attemptNumber, again.reclaimed], [0, INLINE_ATTEMPTS + 3, false])
          yield* repo.remove(org.live, s.id)
        }))
    })
  })
