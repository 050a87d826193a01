import { Effect, Layer, Option } from "effect"
import { type ClaimedStream, ForwardingRepo, type LeasedRecord } from "@opsplatform/core/metering/ForwardingRepo"
import { type ForwardingStatus, type StoredUsage, type Subscription, SubscriptionFilter, UsageFilter, type UsageRecord } from "@opsplatform/core/metering/model"
import { SubscriptionRepo } from "@opsplatform/core/metering/SubscriptionRepo"
import { type RecordOutcome, UsageRepo } from "@opsplatform/core/metering/UsageRepo"
import type { Environment, Tenant } from "@opsplatform/core/shared/tenant"
import { MemoryStore } from "./MemoryStore.ts"
import { filterPredicates, memoryTenantTable } from "./rows.ts"

/** The outbox row of a usage record (the SQL `usage_forwarding`). */
interface ForwardingRow {
  readonly usage_id: string
  readonly stream_id: string
  readonly status: ForwardingStatus
  readonly attempts: number
  readonly next_attempt_at: string | null
  readonly last_attempt_at: string | null
  readonly last_error: string | null
  readonly forwarded_at: string | null
}

/** One customer and meter in one environment (the SQL `usage_streams`). */
interface StreamRow {
  readonly id: string
  readonly environment: Environment
  readonly processor: StoredUsage["processor"]
  readonly processor_customer_id: string
  readonly meter_event_name: string
  readonly locked_until: string | null
  readonly claim_token: string | null
  readonly claimed_at: string | null
}

const ms = (iso: string) => Date.parse(iso)
const active: ReadonlyArray<ForwardingStatus> = ["pending", "retrying", "sending"]

export const SubscriptionRepoMemory: Layer.Layer<SubscriptionRepo, never, MemoryStore> = Layer.effect(
  SubscriptionRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const subscriptions = memoryTenantTable<Subscription>(store, "subscriptions")
    return SubscriptionRepo.of({
      insert: (tenant, s) => Effect.sync(() => subscriptions.insert(tenant, s)),
      update: (tenant, s) =>
        Effect.sync(() => {
          // The stored row keeps its fixed columns, as the SQL update leaves them out.
          const current = subscriptions.find(tenant, s.id)
          if (Option.isSome(current)) {
            subscriptions.update(tenant, {
              ...s,
              contact_id: current.value.contact_id,
              processor: current.value.processor,
              created_at: current.value.created_at
            })
          }
        }),
      find: (tenant, id) => Effect.sync(() => subscriptions.find(tenant, id)),
      list: (tenant, f, page) =>
        Effect.sync(() =>
          subscriptions.page(
            tenant,
            filterPredicates(SubscriptionFilter, f),
            page
          )
        )
    })
  })
)

const tables = (store: MemoryStore["Service"]) => ({
  usage: memoryTenantTable<StoredUsage>(store, "usage_records"),
  forwarding: store.table<ForwardingRow>("usage_forwarding"),
  streams: store.table<StreamRow>("usage_streams")
})

const withForwarding = (u: StoredUsage, f: ForwardingRow): UsageRecord => ({
  ...u,
  forwarding_status: f.status,
  attempts: f.attempts,
  next_attempt_at: f.next_attempt_at,
  last_attempt_at: f.last_attempt_at,
  last_error: f.last_error,
  forwarded_at: f.forwarded_at
})

export const UsageRepoMemory: Layer.Layer<UsageRepo, never, MemoryStore> = Layer.effect(
  UsageRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const { forwarding, streams, usage } = tables(store)
    const subscriptions = memoryTenantTable<Subscription>(store, "subscriptions")
    const view = (tenant: Tenant, u: StoredUsage) => withForwarding(u, forwarding.get(u.id)!)
    return UsageRepo.of({
      record: (tenant, draft) =>
        Effect.sync((): RecordOutcome => {
          const found = subscriptions.find(tenant, draft.subscription_id)
          if (Option.isNone(found)) return { _tag: "NoSubscription" }
          const sub = found.value
          if (sub.status !== "active") return { _tag: "NotActive", status: sub.status }
          // The unique index: one record per identifier of a subscription.
          if (usage.filter(tenant, (o) => o.subscription_id === sub.id && o.identifier === draft.identifier).length > 0) {
            return { _tag: "AlreadyRecorded" }
          }
          const u: StoredUsage = {
            ...draft,
            processor: sub.processor,
            processor_customer_id: sub.processor_customer_id,
            meter_event_name: sub.meter_event_name,
            differing_retries: 0,
            last_differing_retry_at: null
          }
          const streamId = [tenant.environment, u.processor, u.processor_customer_id, u.meter_event_name].join("\n")
          if (!streams.has(streamId)) {
            streams.set(streamId, {
              id: streamId,
              environment: tenant.environment,
              processor: u.processor,
              processor_customer_id: u.processor_customer_id,
              meter_event_name: u.meter_event_name,
              locked_until: null,
              claim_token: null,
              claimed_at: null
            })
          }
          usage.insert(tenant, u)
          forwarding.set(u.id, {
            usage_id: u.id,
            stream_id: streamId,
            status: "pending",
            attempts: 0,
            next_attempt_at: u.created_at,
            last_attempt_at: null,
            last_error: null,
            forwarded_at: null
          })
          return { _tag: "Recorded" }
        }),
      findByIdentifier: (tenant, subscriptionId, identifier) =>
        Effect.sync(() =>
          Option.fromNullishOr(usage.filter(tenant, (u) => u.subscription_id === subscriptionId && u.identifier === identifier)[0])
        ),
      noteDifferingRetry: (tenant, id, at) =>
        Effect.sync(() => {
          const current = usage.find(tenant, id)
          if (Option.isSome(current)) {
            usage.update(tenant, {
              ...current.value,
              differing_retries: current.value.differing_retries + 1,
              last_differing_retry_at: at
            })
          }
        }),
      find: (tenant, id) => Effect.sync(() => Option.map(usage.find(tenant, id), (u) => view(tenant, u))),
      list: (tenant, subscriptionId, filter, page) =>
        Effect.sync(() => {
          // The filter reads the record as listed, with its forwarding state (the SQL layer's view).
          const found = usage.page(tenant, [
            (u) => u.subscription_id === subscriptionId,
            ...filterPredicates(UsageFilter, filter).map((matches) => (u: StoredUsage) => matches(view(tenant, u)))
          ], page)
          return { items: found.items.map((u) => view(tenant, u)), meta: found.meta }
        })
    })
  })
)

export const ForwardingRepoMemory: Layer.Layer<ForwardingRepo, never, MemoryStore> = Layer.effect(
  ForwardingRepo,
  Effect.gen(function*() {
    const { forwarding, streams, usage } = tables(yield* MemoryStore)
    const holds = (streamId: string, claimToken: string) => streams.get(streamId)?.claim_token === claimToken
    const begin = (l: LeasedRecord, now: string, leaseUntil: string) => {
      const f = forwarding.get(l.usageId)
      if (!holds(l.streamId, l.claimToken) || f === undefined || f.stream_id !== l.streamId) return false
      streams.set(l.streamId, { ...streams.get(l.streamId)!, locked_until: leaseUntil })
      forwarding.set(l.usageId, { ...f, status: "sending", attempts: f.attempts + 1, last_attempt_at: now })
      return true
    }
    return ForwardingRepo.of({
      claim: (r) =>
        Effect.sync(() => {
          const now = ms(r.now)
          const due = (f: ForwardingRow) => active.includes(f.status) && f.next_attempt_at !== null && ms(f.next_attempt_at) <= now
          const dueByStream = new Map<string, Array<ForwardingRow>>()
          for (const f of forwarding.values()) {
            if (due(f)) dueByStream.set(f.stream_id, [...(dueByStream.get(f.stream_id) ?? []), f])
          }
          const free = [...streams.values()]
            .filter((s) =>
              r.environments.includes(s.environment) && dueByStream.has(s.id) &&
              (s.locked_until === null || ms(s.locked_until) <= now)
            )
            .sort((a, b) => (a.claimed_at === null ? -Infinity : ms(a.claimed_at)) - (b.claimed_at === null ? -Infinity : ms(b.claimed_at)))
            .slice(0, r.streams)
          return free.map((s): ClaimedStream => {
            streams.set(s.id, { ...s, locked_until: r.leaseUntil, claim_token: r.claimToken, claimed_at: r.now })
            const records = dueByStream.get(s.id)!
              .sort((a, b) => ms(a.next_attempt_at!) - ms(b.next_attempt_at!) || (a.usage_id < b.usage_id ? -1 : 1))
              .slice(0, r.perStream)
            return {
              streamId: s.id,
              environment: s.environment,
              processor: s.processor,
              customerId: s.processor_customer_id,
              meterEventName: s.meter_event_name,
              claimToken: r.claimToken,
              records: records.map((f) => {
                const u = usage.rows.get(f.usage_id)!
                return {
                  usageId: u.id,
                  organizationId: u.organization_id,
                  quantity: u.quantity,
                  timestamp: u.timestamp,
                  status: f.status,
                  attempts: f.attempts
                }
              })
            }
          })
        }),
      begin: (l, now, leaseUntil) => Effect.sync(() => begin(l, now, leaseUntil)),
      settle: (l, o, next) =>
        Effect.sync(() => {
          const f = forwarding.get(l.usageId)
          if (!holds(l.streamId, l.claimToken) || f === undefined || f.stream_id !== l.streamId) return false
          forwarding.set(l.usageId, {
            ...f,
            status: o.status,
            next_attempt_at: o.nextAttemptAt,
            last_error: o.lastError,
            forwarded_at: o.forwardedAt,
            last_attempt_at: o.lastAttemptAt ?? f.last_attempt_at
          })
          if (next !== undefined) begin({ ...l, usageId: next.usageId }, next.now, next.leaseUntil)
          return true
        }),
      release: (streamId, claimToken, freeAt) =>
        Effect.sync(() => {
          if (holds(streamId, claimToken)) streams.set(streamId, { ...streams.get(streamId)!, locked_until: freeAt, claim_token: null })
        })
    })
  })
)
