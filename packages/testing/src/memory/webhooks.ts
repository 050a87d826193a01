import { Clock, Effect, Layer, Option } from "effect"
import { Outbox, OutboxListener, storedEvent, type StoredOutboxEvent } from "@opsplatform/core/events/Outbox"
import { Ids, newId } from "@opsplatform/core/shared/Ids"
import { pageFromArray } from "@opsplatform/core/shared/pagination"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { DeliveryRepo, queuedDelivery } from "@opsplatform/core/webhooks/DeliveryRepo"
import { type AttemptRecord, type ClaimedDelivery, DeliveryFilter, INLINE_ATTEMPTS, type StoredDelivery, type StoredPortalSession, type StoredSecret, type StoredSubscription, toWebhookAttempt, toWebhookDelivery, WebhookDeliveryId, type WebhookSubscriptionId } from "@opsplatform/core/webhooks/model"
import { PortalSessionRepo } from "@opsplatform/core/webhooks/PortalSessionRepo"
import { WebhookRepo } from "@opsplatform/core/webhooks/WebhookRepo"
import { MemoryStore } from "./MemoryStore.ts"
import { filterPredicates, keyOf, memoryTenantTable } from "./rows.ts"

const ms = (iso: string) => Date.parse(iso)

/** Newest first, as the SQL statements order secrets. */
const newestFirst = (a: StoredSecret, b: StoredSecret) => ms(b.created_at) - ms(a.created_at) || (a.id < b.id ? 1 : -1)

/**
 * The webhook tables. Subscriptions and deliveries carry their tenant, as the
 * SQL tables do; secrets and attempts are reached through their subscription
 * and delivery.
 */
const tables = (store: MemoryStore["Service"]) => ({
  subscriptions: memoryTenantTable<StoredSubscription>(store, "webhook_subscriptions"),
  secrets: store.table<StoredSecret>("webhook_secrets"),
  deliveries: memoryTenantTable<StoredDelivery>(store, "webhook_deliveries"),
  attempts: store.table<AttemptRecord>("webhook_attempts"),
  events: store.table<StoredOutboxEvent>("outbox_events")
})

/** The memory twin of `Outbox.layerSql`: the event in the caller's unit of work, handed to the listener there. */
export const OutboxMemory: Layer.Layer<Outbox, never, MemoryStore | Ids | OutboxListener> = Layer.effect(
  Outbox,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const ids = yield* Ids
    const listener = yield* OutboxListener
    const t = tables(store)
    return Outbox.of({
      publish: (tenant, event) =>
        store.transactor.withTransaction(Effect.gen(function*() {
          const exists = [...t.events.values()].some((r) =>
            r.organizationId === tenant.organizationId && r.environment === tenant.environment && r.eventId === event.eventId
          )
          if (exists) return Option.none()
          const stored = storedEvent(tenant, event, yield* ids.uuid, yield* Clock.currentTimeMillis)
          t.events.set(stored.id, stored)
          yield* listener.published(tenant, stored)
          return Option.some(stored)
        }))
    })
  })
)

export const WebhookRepoMemory: Layer.Layer<WebhookRepo, never, MemoryStore> = Layer.effect(
  WebhookRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const t = tables(store)
    // Read from the secrets, as the SQL select derives them.
    const withExpiry = (s: StoredSubscription): StoredSubscription => {
      const own = [...t.secrets.values()].filter((x) => x.subscription_id === s.id).sort(newestFirst)
      const expiries = own.filter((x) => x.expires_at !== null).map((x) => x.expires_at!).sort((a, b) => ms(b) - ms(a))
      const current = own.find((x) => x.expires_at === null)
      return {
        ...s,
        latest_secret_expiry: expiries[0] ?? null,
        signing_scheme: current?.scheme ?? "v1",
        public_key: current?.public_key ?? null
      }
    }
    /** The secrets of one subscription, newest first, if it is the tenant's. */
    const secretsOf = (tenant: Tenant, subscriptionId: WebhookSubscriptionId) =>
      Option.isNone(t.subscriptions.find(tenant, subscriptionId))
        ? []
        : [...t.secrets.values()].filter((x) => x.subscription_id === subscriptionId).sort(newestFirst)
    return WebhookRepo.of({
      insert: (tenant, s) => Effect.sync(() => t.subscriptions.insert(tenant, s)),
      countLocked: (tenant) => Effect.sync(() => t.subscriptions.filter(tenant).length),
      update: (tenant, s) => Effect.sync(() => void t.subscriptions.update(tenant, s)),
      find: (tenant, id) => Effect.sync(() => Option.map(t.subscriptions.find(tenant, id), withExpiry)),
      list: (tenant, page) =>
        Effect.sync(() => {
          const found = t.subscriptions.page(tenant, [], page)
          return { items: found.items.map(withExpiry), meta: found.meta }
        }),
      remove: (tenant, id) =>
        Effect.sync(() => {
          if (!t.subscriptions.remove(tenant, id)) return false
          // ON DELETE CASCADE, as the foreign keys of secrets, deliveries and attempts.
          for (const [key, s] of t.secrets) if (s.subscription_id === id) t.secrets.delete(key)
          for (const d of t.deliveries.filter(tenant, (d) => d.subscription_id === id)) {
            t.deliveries.remove(tenant, d.id)
            for (const [key, a] of t.attempts) if (a.delivery_id === d.id) t.attempts.delete(key)
          }
          return true
        }),
      insertSecret: (tenant, s) =>
        Effect.sync(() => {
          if (Option.isSome(t.subscriptions.find(tenant, s.subscription_id))) t.secrets.set(s.id, s)
        }),
      retireSecrets: (tenant, subscriptionId, retireAt, now, keep) =>
        Effect.sync(() => {
          for (const s of secretsOf(tenant, subscriptionId)) {
            if (s.expires_at !== null && ms(s.expires_at) <= ms(now)) t.secrets.delete(s.id)
            else if (s.expires_at === null || ms(s.expires_at) > ms(retireAt)) t.secrets.set(s.id, { ...s, expires_at: retireAt })
          }
          for (const s of secretsOf(tenant, subscriptionId).slice(keep)) t.secrets.delete(s.id)
        }),
      activeSecrets: (tenant, subscriptionId, now) =>
        Effect.sync(() => secretsOf(tenant, subscriptionId).filter((s) => s.expires_at === null || ms(s.expires_at) > ms(now)))
    })
  })
)

export const DeliveryRepoMemory: Layer.Layer<DeliveryRepo, never, MemoryStore | Ids> = Layer.effect(
  DeliveryRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const ids = yield* Ids
    const t = tables(store)
    const attemptsOf = (deliveryId: string): Array<AttemptRecord> =>
      [...t.attempts.values()].filter((a) => a.delivery_id === deliveryId)
    const toResource = (d: StoredDelivery) =>
      toWebhookDelivery(
        d,
        attemptsOf(d.id).sort((a, b) => b.number - a.number).slice(0, INLINE_ATTEMPTS).map(toWebhookAttempt)
      )
    // Claims and records take the store's lock, as the SQL statements are atomic and see only committed rows.
    const atomically = store.transactor.withTransaction
    return DeliveryRepo.of({
      enqueue: (tenant, event, only) =>
        Effect.gen(function*() {
          const targets = t.subscriptions.filter(tenant, (s) =>
            only === undefined ? s.enabled && s.event_types.includes(event.type) : s.id === only
          )
          const queued: Array<WebhookDeliveryId> = []
          for (const s of targets) {
            const delivery = queuedDelivery(yield* newId(ids, WebhookDeliveryId), s.id, event)
            t.deliveries.insert(tenant, delivery)
            queued.push(delivery.id)
          }
          return queued
        }),
      find: (tenant, subscriptionId, id) =>
        Effect.sync(() =>
          t.deliveries.find(tenant, id).pipe(Option.filter((d) => d.subscription_id === subscriptionId), Option.map(toResource))
        ),
      list: (tenant, subscriptionId, filter, page) =>
        Effect.sync(() => {
          const found = t.deliveries.page(
            tenant,
            [(d) => d.subscription_id === subscriptionId, ...filterPredicates(DeliveryFilter, filter)],
            page
          )
          return { items: found.items.map(toResource), meta: found.meta }
        }),
      listAttempts: (tenant, deliveryId, page) =>
        Effect.sync(() => {
          const rows = Option.isSome(t.deliveries.find(tenant, deliveryId)) ? attemptsOf(deliveryId) : []
          const paged = pageFromArray(page, rows, keyOf)
          return { items: paged.items.map(toWebhookAttempt), meta: paged.meta }
        }),
      reset: (tenant, id, expected, at) =>
        Effect.sync(() => {
          const d = Option.getOrUndefined(t.deliveries.find(tenant, id))
          if (d === undefined || d.status !== expected) return false
          return t.deliveries.update(tenant, {
            ...d,
            status: "pending",
            attempts: 0,
            next_attempt_at: at,
            locked_until: null,
            claim_token: null,
            updated_at: at
          })
        }),
      claim: ({ claimToken, leaseUntil, limit, now }) =>
        atomically(Effect.sync(() => {
          const due = [...t.deliveries.rows.values()].filter((d) => {
            const subscription = t.subscriptions.rows.get(d.subscription_id)
            return (d.status === "pending" || d.status === "failed" || d.status === "sending") &&
              d.next_attempt_at !== null && ms(d.next_attempt_at) <= ms(now) &&
              (d.locked_until === null || ms(d.locked_until) <= ms(now)) && subscription?.enabled === true
          }).sort((a, b) => ms(a.next_attempt_at!) - ms(b.next_attempt_at!)).slice(0, limit)
          return due.map((d): ClaimedDelivery => {
            const next = {
              ...d,
              status: "sending" as const,
              locked_until: leaseUntil,
              claim_token: claimToken,
              attempt_count: d.attempt_count + 1,
              updated_at: now
            }
            t.deliveries.rows.set(d.id, next)
            const subscription = t.subscriptions.rows.get(d.subscription_id)!
            const secrets = [...t.secrets.values()].filter((s) =>
              s.subscription_id === d.subscription_id && (s.expires_at === null || ms(s.expires_at) > ms(now))
            ).sort(newestFirst)
            return {
              id: d.id,
              tenant: { organizationId: d.organization_id, environment: d.environment },
              subscriptionId: d.subscription_id,
              url: subscription.url,
              eventId: d.event_id,
              eventType: d.event_type,
              payload: t.events.get(d.outbox_event_id)!.payload,
              eventCreatedAt: t.events.get(d.outbox_event_id)!.createdAt,
              attempts: d.attempts,
              attemptNumber: next.attempt_count,
              reclaimed: d.status === "sending",
              claimToken,
              secrets: secrets.map((s) => ({ id: s.id, scheme: s.scheme, sealed: s.sealed }))
            }
          })
        })),
      record: (outcomes, now) =>
        atomically(Effect.sync(() => {
          for (const o of outcomes) {
            const d = t.deliveries.rows.get(o.id)
            if (!d) continue
            for (const a of o.log) {
              const taken = attemptsOf(a.delivery_id).some((x) => x.number === a.number)
              if (!taken) t.attempts.set(a.id, a)
            }
            if (d.claim_token !== o.claimToken) continue
            t.deliveries.rows.set(o.id, {
              ...d,
              status: o.status,
              attempts: o.attempts,
              next_attempt_at: o.nextAttemptAt,
              locked_until: null,
              claim_token: null,
              last_attempt_at: o.lastAttemptAt,
              last_status_code: o.lastStatusCode,
              last_error: o.lastError,
              updated_at: now
            })
            const subscription = t.subscriptions.rows.get(d.subscription_id)
            if (o.disableSubscription && subscription?.enabled) {
              t.subscriptions.rows.set(subscription.id, {
                ...subscription,
                enabled: false,
                disabled_reason: "endpoint_gone",
                updated_at: now
              })
            }
          }
        }))
    })
  })
)

/** In-memory PortalSessionRepo. */
export const PortalSessionRepoMemory: Layer.Layer<PortalSessionRepo, never, MemoryStore> = Layer.effect(
  PortalSessionRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const sessions = store.table<StoredPortalSession>("webhook_portal_sessions")
    const where = (predicate: (s: StoredPortalSession) => boolean) => Option.fromNullishOr([...sessions.values()].find(predicate))
    return PortalSessionRepo.of({
      insert: (tenant, s) =>
        Effect.sync(() => void sessions.set(s.id, { ...s, organization_id: tenant.organizationId, environment: tenant.environment })),
      claimLink: (linkHash, cookieHash, now) =>
        Effect.sync(() => {
          const found = where((s) =>
            s.link_hash === linkHash && s.exchanged_at === null && s.revoked_at === null && ms(s.expires_at) > ms(now)
          )
          if (Option.isNone(found)) return found
          const claimed = { ...found.value, cookie_hash: cookieHash, exchanged_at: now }
          sessions.set(claimed.id, claimed)
          return Option.some(claimed)
        }),
      findByLinkHash: (hash) => Effect.sync(() => where((s) => s.link_hash === hash)),
      findByCookieHash: (hash) => Effect.sync(() => where((s) => s.cookie_hash === hash)),
      revoke: (tenant, id, now) =>
        Effect.sync(() => {
          const s = sessions.get(id)
          if (
            s === undefined || s.organization_id !== tenant.organizationId || s.environment !== tenant.environment ||
            s.revoked_at !== null
          ) return false
          sessions.set(id, { ...s, revoked_at: now })
          return true
        }),
      purgeExpired: (before) =>
        Effect.sync(() => {
          let n = 0
          for (const [id, s] of sessions) {
            if (ms(s.expires_at) <= ms(before)) {
              sessions.delete(id)
              n++
            }
          }
          return n
        })
    })
  })
)
