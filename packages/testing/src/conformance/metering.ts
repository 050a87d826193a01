import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import type { CoreLayers } from "@opsplatform/core"
import { ContactRepo } from "@opsplatform/core/contacts/ContactRepo"
import { ContactId } from "@opsplatform/core/contacts/model"
import { type ClaimedStream, ForwardingRepo } from "@opsplatform/core/metering/ForwardingRepo"
import { type StoredUsage, type Subscription, SubscriptionId, UsageRecordId } from "@opsplatform/core/metering/model"
import { SubscriptionRepo } from "@opsplatform/core/metering/SubscriptionRepo"
import { UsageRepo } from "@opsplatform/core/metering/UsageRepo"
import { Ids, newId } from "@opsplatform/core/shared/Ids"
import { Transactor } from "@opsplatform/core/shared/Transactor"
import { pageRequest } from "@opsplatform/core/shared/pagination"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { freshOrganization, timestamps } from "./support.ts"

/**
 * Records here are created in 2099: never due for a forwarder running on the
 * same database at the real time, so the suite shares storage safely.
 */
const FAR = Date.UTC(2099, 0, 1)

/** A subscription (and its contact) of `tenant`, straight through the ports. */
const subscribed = (tenant: Tenant, overrides: Partial<Subscription> = {}) =>
  Effect.gen(function*() {
    const ids = yield* Ids
    const [at] = timestamps(1, FAR)
    const contactId = yield* newId(ids, ContactId)
    yield* Effect.orDie((yield* ContactRepo).insert(tenant, {
      id: contactId,
      name: "Metered customer",
      kind: "customer",
      country: "RO",
      vat_number: null,
      registration_number: null,
      address: null,
      email: null,
      phone: null,
      created_at: at!,
      updated_at: at!,
      fiscal_status: null,
      fiscal_checked_at: null
    }))
    const subscription: Subscription = {
      id: yield* newId(ids, SubscriptionId),
      contact_id: contactId,
      processor: "stripe",
      processor_customer_id: `cus_${(yield* ids.uuid).replace(/-/g, "")}`,
      meter_event_name: "api_requests",
      status: "active",
      created_at: at!,
      updated_at: at!,
      ...overrides
    }
    yield* (yield* SubscriptionRepo).insert(tenant, subscription)
    return subscription
  })

const usageOf = (s: Subscription, id: string, at: string, overrides: Partial<StoredUsage> = {}): StoredUsage => ({
  id: UsageRecordId.make(id),
  subscription_id: s.id,
  identifier: id,
  quantity: 3,
  timestamp: at,
  processor: s.processor,
  processor_customer_id: s.processor_customer_id,
  meter_event_name: s.meter_event_name,
  differing_retries: 0,
  last_differing_retry_at: null,
  created_at: at,
  ...overrides
})

/** Subscriptions and usage records: tenant-scoped, safe on storage other suites share. */
export const meteringConformance = (
  name: string,
  storage: Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>
) =>
  describe(`Metering storage conformance: ${name}`, () => {
    layer(storage, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("subscriptions: stored, changed and listed per organization environment", () =>
        Effect.gen(function*() {
          const repo = yield* SubscriptionRepo
          const a = yield* freshOrganization
          const b = yield* freshOrganization
          const s = yield* subscribed(a.live)
          assert.deepStrictEqual(yield* repo.find(a.live, s.id), Option.some(s))
          assert.isTrue(Option.isNone(yield* repo.find(a.sandbox, s.id)))
          assert.isTrue(Option.isNone(yield* repo.find(b.live, s.id)))
          yield* repo.update(b.live, { ...s, status: "cancelled" })
          assert.strictEqual(Option.getOrThrow(yield* repo.find(a.live, s.id)).status, "active")
          const [, t1] = timestamps(2, FAR)
          const paused = { ...s, status: "paused" as const, meter_event_name: "renamed", updated_at: t1! }
          yield* repo.update(a.live, paused)
          assert.deepStrictEqual(Option.getOrThrow(yield* repo.find(a.live, s.id, true)), paused)
          const other = yield* subscribed(a.live, { created_at: t1!, updated_at: t1! })
          const page = yield* pageRequest({})
          assert.deepStrictEqual((yield* repo.list(a.live, {}, page)).items.map((x) => x.id), [other.id, s.id])
          assert.deepStrictEqual((yield* repo.list(a.live, { status: "paused" }, page)).items.map((x) => x.id), [s.id])
          assert.deepStrictEqual((yield* repo.list(a.live, { contact_id: other.contact_id }, page)).items.map((x) => x.id), [
            other.id
          ])
          assert.strictEqual((yield* repo.list(b.live, {}, page)).meta.total, 0)
        }))

      it.effect("usage: one record per identifier of a subscription, forever; the first one stands", () =>
        Effect.gen(function*() {
          const repo = yield* UsageRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const s = yield* subscribed(org.sandbox)
          const other = yield* subscribed(org.sandbox)
          const [t0, t1] = timestamps(2, FAR)
          const first = usageOf(s, yield* ids.uuid, t0!, { identifier: "report-1" })
          assert.deepStrictEqual(yield* repo.record(org.sandbox, first), { _tag: "Recorded" })
          const again = usageOf(s, yield* ids.uuid, t1!, { identifier: "report-1", quantity: 9 })
          assert.deepStrictEqual(yield* repo.record(org.sandbox, again), { _tag: "AlreadyRecorded" })
          // The same identifier on another subscription is another report.
          assert.deepStrictEqual(
            yield* repo.record(org.sandbox, usageOf(other, yield* ids.uuid, t1!, { identifier: "report-1" })),
            { _tag: "Recorded" }
          )
          assert.deepStrictEqual(yield* repo.findByIdentifier(org.sandbox, s.id, "report-1"), Option.some(first))
          assert.isTrue(Option.isNone(yield* repo.findByIdentifier(org.live, s.id, "report-1")))
          const listed = yield* repo.list(org.sandbox, s.id, {}, yield* pageRequest({}))
          assert.deepStrictEqual(listed.items, [{
            ...first,
            forwarding_status: "pending",
            attempts: 0,
            next_attempt_at: t0!,
            last_attempt_at: null,
            last_error: null,
            forwarded_at: null
          }])
          assert.strictEqual((yield* repo.list(org.live, s.id, {}, yield* pageRequest({}))).meta.total, 0)
          assert.strictEqual((yield* repo.list(org.sandbox, s.id, { forwarding_status: "delivered" }, yield* pageRequest({}))).meta.total, 0)
          assert.strictEqual((yield* repo.list(org.sandbox, s.id, { forwarding_status: "pending" }, yield* pageRequest({}))).meta.total, 1)
        }))

      it.effect("usage: fifty concurrent records under one identifier store exactly one", () =>
        Effect.gen(function*() {
          const repo = yield* UsageRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const s = yield* subscribed(org.live)
          const at = timestamps(50, FAR)
          const attempts = yield* Effect.forEach(at, (t, i) => Effect.map(ids.uuid, (id) => usageOf(s, id, t, { identifier: "same", quantity: i + 1 })))
          const outcomes = yield* Effect.all(attempts.map((u) => repo.record(org.live, u)), { concurrency: "unbounded" })
          const stored = outcomes.map((o) => o._tag === "Recorded")
          assert.strictEqual(stored.filter(Boolean).length, 1)
          assert.isTrue(outcomes.every((o) => o._tag === "Recorded" || o._tag === "AlreadyRecorded"))
          const listed = yield* repo.list(org.live, s.id, {}, yield* pageRequest({}))
          assert.strictEqual(listed.meta.total, 1)
          assert.strictEqual(listed.items[0]!.id, attempts[stored.indexOf(true)]!.id)
        }))

      it.effect("usage: concurrent reports of several tenants are each answered as if alone", () =>
        Effect.gen(function*() {
          const repo = yield* UsageRepo
          const ids = yield* Ids
          const a = yield* freshOrganization
          const b = yield* freshOrganization
          const sa = yield* subscribed(a.live)
          const sb = yield* subscribed(b.live)
          const paused = yield* subscribed(a.live, { status: "paused" })
          const [at] = timestamps(1, FAR)
          const report = (s: Subscription, identifier: string, quantity = 1) =>
            Effect.map(ids.uuid, (id) => usageOf(s, id, at!, { identifier, quantity }))
          // Three bursts of the same mix, all at once: on SQL storage most of them share statements.
          const cases: Array<{ readonly tenant: Tenant; readonly usage: StoredUsage; readonly expected: string }> = []
          for (const round of [1, 2, 3]) {
            cases.push(
              { tenant: a.live, usage: yield* report(sa, `own-${round}`), expected: "Recorded" },
              { tenant: b.live, usage: yield* report(sa, `foreign-${round}`), expected: "NoSubscription" },
              { tenant: a.sandbox, usage: yield* report(sa, `other-environment-${round}`), expected: "NoSubscription" },
              { tenant: a.live, usage: yield* report(paused, `paused-${round}`), expected: "NotActive" },
              { tenant: b.live, usage: yield* report(sb, `own-${round}`), expected: "Recorded" },
              { tenant: a.live, usage: yield* report(sa, `twice-${round}`, 2), expected: "Recorded or AlreadyRecorded" },
              { tenant: a.live, usage: yield* report(sa, `twice-${round}`, 5), expected: "Recorded or AlreadyRecorded" }
            )
          }
          const outcomes = yield* Effect.all(cases.map((c) => repo.record(c.tenant, c.usage)), { concurrency: "unbounded" })
          cases.forEach((c, i) => {
            const outcome = outcomes[i]!
            if (c.expected === "Recorded or AlreadyRecorded") {
              assert.include(["Recorded", "AlreadyRecorded"], outcome._tag, c.usage.identifier)
            } else {
              assert.strictEqual(outcome._tag, c.expected, `${c.usage.identifier} of ${c.tenant.environment}`)
            }
            if (outcome._tag === "NotActive") assert.strictEqual(outcome.status, "paused")
          })
          const recordedIds = cases.filter((_, i) => outcomes[i]!._tag === "Recorded").map((c) => c.usage.id)
          // Each repeated identifier: exactly one of its two reports recorded, and the record is that report.
          for (const round of [1, 2, 3]) {
            const twice = cases.filter((c) => c.usage.identifier === `twice-${round}`)
            assert.strictEqual(twice.filter((c) => recordedIds.includes(c.usage.id)).length, 1)
            const stored = Option.getOrThrow(yield* repo.findByIdentifier(a.live, sa.id, `twice-${round}`))
            assert.isTrue(recordedIds.includes(stored.id))
            assert.strictEqual(stored.quantity, twice.find((c) => c.usage.id === stored.id)!.usage.quantity)
          }
          const page = yield* pageRequest({ perPage: 100 })
          const listedA = (yield* repo.list(a.live, sa.id, {}, page)).items
          assert.sameMembers(listedA.map((r) => r.identifier), ["own-1", "own-2", "own-3", "twice-1", "twice-2", "twice-3"])
          assert.isTrue(listedA.every((r) => r.forwarding_status === "pending" && r.attempts === 0))
          assert.sameMembers((yield* repo.list(b.live, sb.id, {}, page)).items.map((r) => r.identifier), ["own-1", "own-2", "own-3"])
          assert.strictEqual((yield* repo.list(a.live, paused.id, {}, page)).meta.total, 0)
          assert.strictEqual((yield* repo.list(a.sandbox, sa.id, {}, page)).meta.total, 0)
        }))

      it.effect("usage: a report inside a transaction commits or rolls back with it", () =>
        Effect.gen(function*() {
          const repo = yield* UsageRepo
          const tx = yield* Transactor
          const ids = yield* Ids
          const org = yield* freshOrganization
          const s = yield* subscribed(org.live)
          const [t0, t1] = timestamps(2, FAR)
          const kept = usageOf(s, yield* ids.uuid, t0!, { identifier: "kept" })
          const dropped = usageOf(s, yield* ids.uuid, t1!, { identifier: "dropped" })
          assert.deepStrictEqual(yield* tx.withTransaction(repo.record(org.live, kept)), { _tag: "Recorded" })
          const failed = yield* tx.withTransaction(
            Effect.flatMap(repo.record(org.live, dropped), (outcome) => Effect.fail(outcome))
          ).pipe(Effect.flip)
          assert.deepStrictEqual(failed, { _tag: "Recorded" })
          const page = yield* pageRequest({})
          assert.deepStrictEqual((yield* repo.list(org.live, s.id, {}, page)).items.map((r) => r.id), [kept.id])
          // The identifier rolled back was never recorded: a report under it now is.
          assert.deepStrictEqual(yield* repo.record(org.live, { ...dropped, id: UsageRecordId.make(yield* ids.uuid) }), {
            _tag: "Recorded"
          })
        }))

      it.effect("usage: recorded only on the tenant's own active subscription, with its processor, customer and meter", () =>
        Effect.gen(function*() {
          const repo = yield* UsageRepo
          const subscriptions = yield* SubscriptionRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const other = yield* freshOrganization
          const s = yield* subscribed(org.live, { processor_customer_id: "cus_FromTheSubscription", meter_event_name: "gb_stored" })
          const [t0, t1] = timestamps(2, FAR)
          // The record takes what the subscription says, whatever the caller passed.
          const u = usageOf(s, yield* ids.uuid, t0!, { processor_customer_id: "cus_Other", meter_event_name: "other" })
          assert.deepStrictEqual(yield* repo.record(other.live, u), { _tag: "NoSubscription" })
          assert.deepStrictEqual(yield* repo.record(org.sandbox, u), { _tag: "NoSubscription" })
          yield* subscriptions.update(org.live, { ...s, status: "paused", updated_at: t1! })
          assert.deepStrictEqual(yield* repo.record(org.live, u), { _tag: "NotActive", status: "paused" })
          assert.strictEqual((yield* repo.list(org.live, s.id, {}, yield* pageRequest({}))).meta.total, 0)
          yield* subscriptions.update(org.live, { ...s, status: "active", updated_at: t1! })
          assert.deepStrictEqual(yield* repo.record(org.live, u), { _tag: "Recorded" })
          const found = Option.getOrThrow(yield* repo.find(org.live, u.id))
          assert.deepStrictEqual([found.processor, found.processor_customer_id, found.meter_event_name], [
            "stripe",
            "cus_FromTheSubscription",
            "gb_stored"
          ])
          assert.isTrue(Option.isNone(yield* repo.find(other.live, u.id)))
        }))

      it.effect("usage: a differing retry is counted on the record, in its tenant only", () =>
        Effect.gen(function*() {
          const repo = yield* UsageRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const s = yield* subscribed(org.live)
          const [t0, t1, t2] = timestamps(3, FAR)
          const u = usageOf(s, yield* ids.uuid, t0!)
          yield* repo.record(org.live, u)
          yield* repo.noteDifferingRetry(org.sandbox, u.id, t1!)
          yield* repo.noteDifferingRetry(org.live, u.id, t1!)
          yield* repo.noteDifferingRetry(org.live, u.id, t2!)
          const found = Option.getOrThrow(yield* repo.find(org.live, u.id))
          assert.deepStrictEqual([found.differing_retries, found.last_differing_retry_at], [2, t2!])
          assert.isTrue(Option.isNone(yield* repo.find(org.sandbox, u.id)))
        }))
    })
  })

const SECOND = 1000

const claimAt = (nowMs: number, options: { readonly streams?: number; readonly perStream?: number; readonly leaseMs?: number } = {}) =>
  Effect.gen(function*() {
    const repo = yield* ForwardingRepo
    const ids = yield* Ids
    return yield* repo.claim({
      now: new Date(nowMs).toISOString(),
      leaseUntil: new Date(nowMs + (options.leaseMs ?? 60 * SECOND)).toISOString(),
      claimToken: yield* ids.uuid,
      environments: ["live", "sandbox"],
      streams: options.streams ?? 100,
      perStream: options.perStream ?? 100
    })
  })

const streamOf = (claimed: ReadonlyArray<ClaimedStream>, s: Subscription) =>
  claimed.find((c) => c.customerId === s.processor_customer_id && c.meterEventName === s.meter_event_name)

/** A fresh organization's subscription in `environment` with `count` records, one a second from `start`. */
const withRecords = (start: number, count: number, environment: "live" | "sandbox" = "live") =>
  Effect.gen(function*() {
    const repo = yield* UsageRepo
    const ids = yield* Ids
    const org = yield* freshOrganization
    const tenant = org[environment]
    const s = yield* subscribed(tenant)
    const records: Array<StoredUsage> = []
    for (const t of timestamps(count, start)) {
      const u = usageOf(s, yield* ids.uuid, t)
      records.push(u)
      yield* repo.record(tenant, u)
    }
    return { org, tenant, s, records }
  })

/**
 * The forwarding outbox's claims: global across tenants, as forwarders are,
 * so run it on storage no forwarder shares (see the webhook suite). Every
 * test works at its own instants, years apart, so earlier tests' streams are
 * no longer due, and looks only at its own streams.
 */
export const forwardingConformance = (
  name: string,
  storage: Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>
) =>
  describe(`Forwarding outbox conformance: ${name}`, () => {
    layer(storage, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("a stream is one customer and meter of one environment, across subscriptions and organizations", () =>
        Effect.gen(function*() {
          const repo = yield* UsageRepo
          const ids = yield* Ids
          const start = Date.UTC(2101, 0, 1)
          const a = yield* freshOrganization
          const b = yield* freshOrganization
          const s = yield* subscribed(a.live)
          const sameCustomer = yield* subscribed(b.live, { processor_customer_id: s.processor_customer_id })
          const sandbox = yield* subscribed(a.sandbox, { processor_customer_id: s.processor_customer_id })
          const otherMeter = yield* subscribed(a.live, { processor_customer_id: s.processor_customer_id, meter_event_name: "storage_gb" })
          const at = timestamps(4, start)
          const u1 = usageOf(s, yield* ids.uuid, at[0]!)
          const u2 = usageOf(sameCustomer, yield* ids.uuid, at[1]!)
          yield* repo.record(a.live, u1)
          yield* repo.record(b.live, u2)
          yield* repo.record(a.sandbox, usageOf(sandbox, yield* ids.uuid, at[2]!))
          yield* repo.record(a.live, usageOf(otherMeter, yield* ids.uuid, at[3]!))
          const claimed = (yield* claimAt(start + 10 * SECOND)).filter((c) => c.customerId === s.processor_customer_id)
          assert.strictEqual(claimed.length, 3)
          const live = claimed.find((c) => c.environment === "live" && c.meterEventName === "api_requests")!
          assert.deepStrictEqual(live.records.map((r) => [r.usageId, r.organizationId, r.quantity, r.timestamp, r.status, r.attempts]), [
            [u1.id, a.id, 3, u1.timestamp, "pending", 0],
            [u2.id, b.id, 3, u2.timestamp, "pending", 0]
          ])
        }))

      it.effect("a leased stream is nobody else's until it is released or its lease runs out", () =>
        Effect.gen(function*() {
          const repo = yield* UsageRepo
          const forwarding = yield* ForwardingRepo
          const ids = yield* Ids
          const start = Date.UTC(2103, 0, 1)
          const { org, records: made, s } = yield* withRecords(start, 5)
          // Not due before it was recorded.
          assert.isUndefined(streamOf(yield* claimAt(start - SECOND), s))
          const first = streamOf(yield* claimAt(start + 10 * SECOND, { perStream: 2, leaseMs: 30 * SECOND }), s)!
          assert.deepStrictEqual(first.records.map((r) => r.usageId), made.slice(0, 2).map((u) => u.id))
          assert.isUndefined(streamOf(yield* claimAt(start + 20 * SECOND), s))
          // The holder sends one; a stranger's token changes nothing.
          const lease = { streamId: first.streamId, claimToken: first.claimToken, usageId: first.records[0]!.usageId }
          const stranger = { ...lease, claimToken: yield* ids.uuid }
          assert.isFalse(yield* forwarding.begin(stranger, new Date(start + 21 * SECOND).toISOString(), new Date(start + 90 * SECOND).toISOString()))
          assert.isTrue(yield* forwarding.begin(lease, new Date(start + 21 * SECOND).toISOString(), new Date(start + 90 * SECOND).toISOString()))
          const sending = Option.getOrThrow(yield* repo.find(org.live, lease.usageId))
          assert.deepStrictEqual([sending.forwarding_status, sending.attempts, sending.last_attempt_at], [
            "sending",
            1,
            new Date(start + 21 * SECOND).toISOString()
          ])
          const delivered = {
            status: "delivered" as const,
            lastAttemptAt: new Date(start + 21 * SECOND).toISOString(),
            filedAt: new Date(start + 22 * SECOND).toISOString(),
            nextAttemptAt: null,
            lastError: null,
            forwardedAt: new Date(start + 22 * SECOND).toISOString()
          }
          assert.isFalse(yield* forwarding.settle(stranger, delivered))
          assert.isTrue(yield* forwarding.settle(lease, delivered))
          const done = Option.getOrThrow(yield* repo.find(org.live, lease.usageId))
          assert.deepStrictEqual([done.forwarding_status, done.attempts, done.forwarded_at, done.next_attempt_at], [
            "delivered",
            1,
            delivered.forwardedAt,
            null
          ])
          // Begin renewed the lease to +90 s: still held at +60 s.
          assert.isUndefined(streamOf(yield* claimAt(start + 60 * SECOND), s))
          yield* forwarding.release(first.streamId, first.claimToken, null)
          const next = streamOf(yield* claimAt(start + 61 * SECOND), s)!
          assert.deepStrictEqual(next.records.map((r) => r.usageId), made.slice(1).map((u) => u.id))
          // The old holder's token no longer files anything.
          assert.isFalse(yield* forwarding.settle({ ...lease, usageId: made[1]!.id }, delivered))
        }))

      it.effect("filing an outcome can begin the stream's next record in the same step, under the lease only", () =>
        Effect.gen(function*() {
          const repo = yield* UsageRepo
          const forwarding = yield* ForwardingRepo
          const ids = yield* Ids
          const start = Date.UTC(2104, 0, 1)
          const { org, records, s } = yield* withRecords(start, 2)
          const [u1, u2] = [records[0]!, records[1]!]
          const claimed = streamOf(yield* claimAt(start + 10 * SECOND, { leaseMs: 20 * SECOND }), s)!
          const lease = { streamId: claimed.streamId, claimToken: claimed.claimToken, usageId: u1.id }
          yield* forwarding.begin(lease, new Date(start + 11 * SECOND).toISOString(), new Date(start + 31 * SECOND).toISOString())
          const outcome = {
            status: "delivered" as const,
            lastAttemptAt: new Date(start + 11 * SECOND).toISOString(),
            filedAt: new Date(start + 12 * SECOND).toISOString(),
            nextAttemptAt: null,
            lastError: null,
            forwardedAt: new Date(start + 12 * SECOND).toISOString()
          }
          const next = { usageId: u2.id, now: new Date(start + 12 * SECOND).toISOString(), leaseUntil: new Date(start + 90 * SECOND).toISOString() }
          assert.isFalse(yield* forwarding.settle({ ...lease, claimToken: yield* ids.uuid }, outcome, next))
          assert.strictEqual(Option.getOrThrow(yield* repo.find(org.live, u2.id)).forwarding_status, "pending")
          assert.isTrue(yield* forwarding.settle(lease, outcome, next))
          const [first, second] = [Option.getOrThrow(yield* repo.find(org.live, u1.id)), Option.getOrThrow(yield* repo.find(org.live, u2.id))]
          assert.deepStrictEqual([first.forwarding_status, first.attempts], ["delivered", 1])
          assert.deepStrictEqual([second.forwarding_status, second.attempts, second.last_attempt_at], ["sending", 1, next.now])
          // The lease was renewed with it: still held past the claim's own lease.
          assert.isUndefined(streamOf(yield* claimAt(start + 60 * SECOND), s))
        }))

      it.effect("a stream whose forwarder stopped is taken over, the record under way shown as a call made", () =>
        Effect.gen(function*() {
          const forwarding = yield* ForwardingRepo
          const start = Date.UTC(2105, 0, 1)
          const { records, s } = yield* withRecords(start, 1, "sandbox")
          const u = records[0]!
          const first = streamOf(yield* claimAt(start + SECOND, { leaseMs: 5 * SECOND }), s)!
          assert.isTrue(yield* forwarding.begin(
            { streamId: first.streamId, claimToken: first.claimToken, usageId: u.id },
            new Date(start + 2 * SECOND).toISOString(),
            new Date(start + 7 * SECOND).toISOString()
          ))
          assert.isUndefined(streamOf(yield* claimAt(start + 6 * SECOND), s))
          const taken = streamOf(yield* claimAt(start + 8 * SECOND), s)!
          assert.notStrictEqual(taken.claimToken, first.claimToken)
          assert.deepStrictEqual(taken.records.map((r) => [r.usageId, r.status, r.attempts]), [[u.id, "sending", 1]])
        }))

      it.effect("a stream given back with a backoff waits it out; a retrying record waits for its own time", () =>
        Effect.gen(function*() {
          const repo = yield* UsageRepo
          const forwarding = yield* ForwardingRepo
          const start = Date.UTC(2107, 0, 1)
          const { org, records, s } = yield* withRecords(start, 2)
          const [u1, u2] = [records[0]!, records[1]!]
          const first = streamOf(yield* claimAt(start + 10 * SECOND), s)!
          const lease = { streamId: first.streamId, claimToken: first.claimToken, usageId: u1.id }
          yield* forwarding.begin(lease, new Date(start + 10 * SECOND).toISOString(), new Date(start + 70 * SECOND).toISOString())
          assert.isTrue(yield* forwarding.settle(lease, {
            status: "retrying",
            lastAttemptAt: new Date(start + 10 * SECOND).toISOString(),
            filedAt: new Date(start + 11 * SECOND).toISOString(),
            nextAttemptAt: new Date(start + 40 * SECOND).toISOString(),
            lastError: "Service unavailable",
            forwardedAt: null
          }))
          yield* forwarding.release(first.streamId, first.claimToken, new Date(start + 30 * SECOND).toISOString())
          assert.isUndefined(streamOf(yield* claimAt(start + 29 * SECOND), s))
          // Free again, but only u2 is due until u1's own time.
          const later = streamOf(yield* claimAt(start + 31 * SECOND), s)!
          assert.deepStrictEqual(later.records.map((r) => r.usageId), [u2.id])
          yield* forwarding.release(later.streamId, later.claimToken, null)
          const last = streamOf(yield* claimAt(start + 41 * SECOND), s)!
          // Due first, sent first.
          assert.deepStrictEqual(last.records.map((r) => [r.usageId, r.status, r.attempts]), [[u2.id, "pending", 0], [u1.id, "retrying", 1]])
          const failed = yield* repo.find(org.live, u1.id)
          assert.strictEqual(Option.getOrThrow(failed).last_error, "Service unavailable")
        }))

      it.effect("only streams of the environments asked for, and at most as many as asked", () =>
        Effect.gen(function*() {
          const repo = yield* UsageRepo
          const forwarding = yield* ForwardingRepo
          const ids = yield* Ids
          const start = Date.UTC(2109, 0, 1)
          const org = yield* freshOrganization
          const live = yield* subscribed(org.live)
          const sandbox = yield* subscribed(org.sandbox)
          yield* repo.record(org.live, usageOf(live, yield* ids.uuid, timestamps(1, start)[0]!))
          yield* repo.record(org.sandbox, usageOf(sandbox, yield* ids.uuid, timestamps(1, start)[0]!))
          const onlySandbox = yield* forwarding.claim({
            now: new Date(start + SECOND).toISOString(),
            leaseUntil: new Date(start + 60 * SECOND).toISOString(),
            claimToken: yield* ids.uuid,
            environments: ["sandbox"],
            streams: 100,
            perStream: 10
          })
          assert.isDefined(streamOf(onlySandbox, sandbox))
          assert.isUndefined(streamOf(onlySandbox, live))
          assert.deepStrictEqual(yield* forwarding.claim({
            now: new Date(start + SECOND).toISOString(),
            leaseUntil: new Date(start + 60 * SECOND).toISOString(),
            claimToken: yield* ids.uuid,
            environments: [],
            streams: 100,
            perStream: 10
          }), [])
          const one = yield* claimAt(start + 2 * SECOND, { streams: 1 })
          assert.strictEqual(one.length, 1)
        }))
    })
  })
