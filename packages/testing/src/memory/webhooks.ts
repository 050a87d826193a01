import { Clock, Effect, Layer, Option } from "effect"
import { Outbox, eventPayload, type StoredOutboxEvent } from "@opsplatform/core/events/Outbox"
import { Ids } from "@opsplatform/core/shared/Ids"
import { pageFromArray } from "@opsplatform/core/shared/pagination"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { DeliveryRepo } from "@opsplatform/core/webhooks/DeliveryRepo"
import { DeliverySignal } from "@opsplatform/core/webhooks/DeliverySignal"
import {
  type AttemptRecord,
  type ClaimedDelivery,
  type DeliveryStatus,
  INLINE_ATTEMPTS,
  type StoredSecret,
  type StoredSubscription,
  type WebhookAttempt,
  type WebhookDelivery
} from "@opsplatform/core/webhooks/model"
import { type SubscriptionRow, WebhookRepo } from "@opsplatform/core/webhooks/WebhookRepo"
import { MemoryStore } from "./MemoryStore.ts"
import { keyOf } from "./rows.ts"

/** A delivery row, as the SQL table holds it. */
interface DeliveryRow {
  readonly id: string
  readonly tenant: Tenant
  readonly subscription_id: string
  readonly outbox_event_id: string
  readonly event_id: string
  readonly event_type: string
  readonly status: DeliveryStatus
  readonly attempts: number
  readonly attempt_count: number
  readonly next_attempt_at: string | null
  readonly locked_until: string | null
  readonly claim_token: string | null
  readonly last_attempt_at: string | null
  readonly last_status_code: number | null
  readonly last_error: string | null
  readonly created_at: string
  readonly updated_at: string
}

const sameTenant = (a: Tenant, b: Tenant) => a.organizationId === b.organizationId && a.environment === b.environment
const ms = (iso: string) => Date.parse(iso)

const tables = (store: MemoryStore["Service"]) => ({
  subscriptions: store.table<StoredSubscription>("webhook_subscriptions"),
  secrets: store.table<StoredSecret>("webhook_secrets"),
  deliveries: store.table<DeliveryRow>("webhook_deliveries"),
  attempts: store.table<AttemptRecord>("webhook_attempts"),
  events: store.table<StoredOutboxEvent>("outbox_events")
})

/** The memory twin of `Outbox.layerSql`: the event and its deliveries in the caller's unit of work. */
export const OutboxMemory: Layer.Layer<Outbox, never, MemoryStore | Ids | DeliverySignal> = Layer.effect(
  Outbox,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const ids = yield* Ids
    const signal = yield* DeliverySignal
    const t = tables(store)
    const write = (tenant: Tenant, event: Parameters<Outbox["Service"]["publish"]>[1], only: string | undefined) =>
      store.transactor.withTransaction(Effect.gen(function*() {
        const exists = [...t.events.values()].some((r) =>
          r.organizationId === tenant.organizationId && r.environment === tenant.environment && r.eventId === event.eventId
        )
        if (exists) return Option.none<string>()
        const id = yield* ids.uuid
        const now = yield* Clock.currentTimeMillis
        const at = new Date(now).toISOString()
        const payload = eventPayload(tenant, event, now)
        t.events.set(id, {
          ...event,
          id,
          organizationId: tenant.organizationId,
          environment: tenant.environment,
          createdAt: at,
          payload
        })
        const targets = [...t.subscriptions.values()].filter((s) =>
          sameTenant(s.tenant, tenant) &&
          (only === undefined ? s.enabled && s.event_types.includes(event.type) : s.id === only)
        )
        let first: string | undefined
        for (const s of targets) {
          const deliveryId = yield* ids.uuid
          first ??= deliveryId
          t.deliveries.set(deliveryId, {
            id: deliveryId,
            tenant,
            subscription_id: s.id,
            outbox_event_id: id,
            event_id: event.eventId,
            event_type: event.type,
            status: "pending",
            attempts: 0,
            attempt_count: 0,
            next_attempt_at: at,
            locked_until: null,
            claim_token: null,
            last_attempt_at: null,
            last_status_code: null,
            last_error: null,
            created_at: at,
            updated_at: at
          })
        }
        if (first !== undefined) yield* store.transactor.afterCommit(signal.notify)
        return Option.fromNullishOr(first)
      }))
    return Outbox.of({
      publish: (tenant, event) => Effect.asVoid(write(tenant, event, undefined)),
      publishTo: (tenant, event, subscriptionId) => write(tenant, event, subscriptionId)
    })
  })
)

export const WebhookRepoMemory: Layer.Layer<WebhookRepo, never, MemoryStore> = Layer.effect(
  WebhookRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const t = tables(store)
    const withExpiry = (s: StoredSubscription): SubscriptionRow => {
      const expiries = [...t.secrets.values()].filter((x) => x.subscription_id === s.id && x.expires_at !== null)
        .map((x) => x.expires_at!).sort((a, b) => ms(b) - ms(a))
      return { ...s, latest_secret_expiry: expiries[0] ?? null }
    }
    const find = (tenant: Tenant, id: string) =>
      Option.filter(Option.fromNullishOr(t.subscriptions.get(id)), (s) => sameTenant(s.tenant, tenant))
    const secretsOf = (subscriptionId: string) =>
      [...t.secrets.values()].filter((x) => x.subscription_id === subscriptionId).sort((a, b) =>
        ms(b.created_at) - ms(a.created_at) || (a.id < b.id ? 1 : -1)
      )
    return WebhookRepo.of({
      insert: (s) => Effect.sync(() => void t.subscriptions.set(s.id, s)),
      update: (s) =>
        Effect.sync(() => {
          const current = t.subscriptions.get(s.id)
          if (current && sameTenant(current.tenant, s.tenant)) t.subscriptions.set(s.id, { ...s, tenant: current.tenant })
        }),
      find: (tenant, id) => Effect.sync(() => Option.map(find(tenant, id), withExpiry)),
      list: (tenant, page) =>
        Effect.sync(() =>
          pageFromArray(page, [...t.subscriptions.values()].filter((s) => sameTenant(s.tenant, tenant)).map(withExpiry), keyOf)
        ),
      remove: (tenant, id) =>
        Effect.sync(() => {
          if (Option.isNone(find(tenant, id))) return false
          t.subscriptions.delete(id)
          for (const [key, s] of t.secrets) if (s.subscription_id === id) t.secrets.delete(key)
          for (const [key, d] of t.deliveries) {
            if (d.subscription_id !== id) continue
            t.deliveries.delete(key)
            for (const [attemptKey, a] of t.attempts) if (a.delivery_id === key) t.attempts.delete(attemptKey)
          }
          return true
        }),
      insertSecret: (s) => Effect.sync(() => void t.secrets.set(s.id, s)),
      retireSecrets: (subscriptionId, retireAt, now, keep) =>
        Effect.sync(() => {
          for (const s of secretsOf(subscriptionId)) {
            if (s.expires_at !== null && ms(s.expires_at) <= ms(now)) t.secrets.delete(s.id)
            else if (s.expires_at === null || ms(s.expires_at) > ms(retireAt)) t.secrets.set(s.id, { ...s, expires_at: retireAt })
          }
          for (const s of secretsOf(subscriptionId).slice(keep)) t.secrets.delete(s.id)
        }),
      activeSecrets: (subscriptionId, now) =>
        Effect.sync(() => secretsOf(subscriptionId).filter((s) => s.expires_at === null || ms(s.expires_at) > ms(now)))
    })
  })
)

export const DeliveryRepoMemory: Layer.Layer<DeliveryRepo, never, MemoryStore> = Layer.effect(
  DeliveryRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const t = tables(store)
    const attemptsOf = (deliveryId: string): Array<WebhookAttempt> =>
      [...t.attempts.values()].filter((a) => a.delivery_id === deliveryId).sort((a, b) => b.number - a.number).map(
        ({ delivery_id: _d, id: _i, ...a }) => a
      )
    const toApi = (d: DeliveryRow): WebhookDelivery => ({
      id: d.id,
      subscription_id: d.subscription_id,
      event_id: d.event_id,
      event_type: d.event_type,
      status: d.status,
      attempt_count: d.attempt_count,
      next_attempt_at: d.status === "succeeded" || d.status === "dead" ? null : d.next_attempt_at,
      last_attempt_at: d.last_attempt_at,
      last_status_code: d.last_status_code,
      last_error: d.last_error,
      attempts: attemptsOf(d.id).slice(0, INLINE_ATTEMPTS),
      created_at: d.created_at,
      updated_at: d.updated_at
    })
    const find = (tenant: Tenant, subscriptionId: string, id: string) =>
      Option.filter(
        Option.fromNullishOr(t.deliveries.get(id)),
        (d) => sameTenant(d.tenant, tenant) && d.subscription_id === subscriptionId
      )
    // Claims and records take the store's lock, as the SQL statements are atomic and see only committed rows.
    const atomically = store.transactor.withTransaction
    return DeliveryRepo.of({
      find: (tenant, subscriptionId, id) => Effect.sync(() => Option.map(find(tenant, subscriptionId, id), toApi)),
      list: (tenant, subscriptionId, filter, page) =>
        Effect.sync(() =>
          pageFromArray(
            page,
            [...t.deliveries.values()].filter((d) =>
              sameTenant(d.tenant, tenant) && d.subscription_id === subscriptionId &&
              (filter.status === undefined || d.status === filter.status)
            ).map(toApi),
            keyOf
          )
        ),
      listAttempts: (deliveryId, page) =>
        Effect.sync(() => {
          const rows = [...t.attempts.values()].filter((a) => a.delivery_id === deliveryId)
          const paged = pageFromArray(page, rows.map((a) => ({ ...a, created_at: a.attempted_at })), keyOf)
          return {
            items: paged.items.map(({ created_at: _c, delivery_id: _d, id: _i, ...a }) => a),
            meta: paged.meta
          }
        }),
      reset: (tenant, id, expected, at) =>
        Effect.sync(() => {
          const d = t.deliveries.get(id)
          if (!d || !sameTenant(d.tenant, tenant) || d.status !== expected) return false
          t.deliveries.set(id, {
            ...d,
            status: "pending",
            attempts: 0,
            next_attempt_at: at,
            locked_until: null,
            claim_token: null,
            updated_at: at
          })
          return true
        }),
      claim: ({ claimToken, leaseUntil, limit, now }) =>
        atomically(Effect.sync(() => {
          const due = [...t.deliveries.values()].filter((d) => {
            const subscription = t.subscriptions.get(d.subscription_id)
            return (d.status === "pending" || d.status === "failed" || d.status === "sending") &&
              d.next_attempt_at !== null && ms(d.next_attempt_at) <= ms(now) &&
              (d.locked_until === null || ms(d.locked_until) <= ms(now)) && subscription?.enabled === true
          }).sort((a, b) => ms(a.next_attempt_at!) - ms(b.next_attempt_at!)).slice(0, limit)
          return due.map((d): ClaimedDelivery => {
            const next: DeliveryRow = {
              ...d,
              status: "sending",
              locked_until: leaseUntil,
              claim_token: claimToken,
              attempt_count: d.attempt_count + 1,
              updated_at: now
            }
            t.deliveries.set(d.id, next)
            const subscription = t.subscriptions.get(d.subscription_id)!
            const secrets = [...t.secrets.values()].filter((s) =>
              s.subscription_id === d.subscription_id && (s.expires_at === null || ms(s.expires_at) > ms(now))
            ).sort((a, b) => ms(b.created_at) - ms(a.created_at) || (a.id < b.id ? 1 : -1))
            return {
              id: d.id,
              tenant: d.tenant,
              subscriptionId: d.subscription_id,
              url: subscription.url,
              eventId: d.event_id,
              eventType: d.event_type,
              payload: t.events.get(d.outbox_event_id)!.payload,
              attempts: d.attempts,
              attemptNumber: next.attempt_count,
              reclaimed: d.status === "sending",
              claimToken,
              secrets: secrets.map((s) => ({ id: s.id, sealed: s.sealed }))
            }
          })
        })),
      record: (outcomes, now) =>
        atomically(Effect.sync(() => {
          for (const o of outcomes) {
            const d = t.deliveries.get(o.id)
            if (!d) continue
            for (const a of o.log) {
              const taken = [...t.attempts.values()].some((x) => x.delivery_id === a.delivery_id && x.number === a.number)
              if (!taken) t.attempts.set(a.id, a)
            }
            if (d.claim_token !== o.claimToken) continue
            t.deliveries.set(o.id, {
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
            const subscription = t.subscriptions.get(d.subscription_id)
            if (o.disableSubscription && subscription?.enabled) {
              t.subscriptions.set(subscription.id, {
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
