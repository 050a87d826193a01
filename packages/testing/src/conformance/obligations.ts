import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import type { CoreLayers } from "@opsplatform/core"
import { ContractRepo } from "@opsplatform/core/contracts/ContractRepo"
import { type Contract, ContractId } from "@opsplatform/core/contracts/model"
import { type ObligationBucket, ObligationId, type ObligationRecord } from "@opsplatform/core/obligations/model"
import { ObligationMonitor } from "@opsplatform/core/obligations/Monitor"
import { Notifier } from "@opsplatform/core/obligations/Notifier"
import { ObligationRepo } from "@opsplatform/core/obligations/ObligationRepo"
import { anchorDayOf, deriveBucket, type NoticeKind } from "@opsplatform/core/obligations/rules"
import { Ids } from "@opsplatform/core/shared/Ids"
import { pageRequest } from "@opsplatform/core/shared/pagination"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { Transactor } from "@opsplatform/core/shared/Transactor"
import { UserId } from "@opsplatform/core/tenancy/model"
import { TenancyRepo } from "@opsplatform/core/tenancy/TenancyRepo"
import { freshOrganization, timestamps } from "./support.ts"

/*
 * Dates here lie in the 2090s and every monitor pass is scoped to its own
 * organization, so suites sharing one database with tests on the real clock
 * never claim each other's notices.
 */

export const obligation = (id: string, contractId: ContractId, at: string, overrides: Partial<ObligationRecord> = {}): ObligationRecord => {
  const due = overrides.due_date ?? "2091-06-30"
  return {
    id: ObligationId.make(id),
    contract_id: contractId,
    title: `Obligation ${id.slice(-4)}`,
    type: "payment",
    due_date: due,
    recurrence: "none",
    recurrence_anchor_day: anchorDayOf(due),
    remind_days_before: 7,
    status: "pending",
    obligor: "us",
    assignee_user_id: null,
    clause_label: null,
    clause_excerpt: null,
    description: null,
    evidence_document_id: null,
    evidence_note: null,
    completed_at: null,
    cancelled_at: null,
    reminder_sent_at: null,
    overdue_notified_at: null,
    escalated_at: null,
    previous_obligation_id: null,
    created_at: at,
    updated_at: at,
    ...overrides
  }
}

/** An organization with its settings and one contract in its live environment. */
const orgWithContract = (settings: { readonly time_zone?: string; readonly escalation_delay_days?: number } = {}) =>
  Effect.gen(function*() {
    const org = yield* freshOrganization
    if (settings.time_zone !== undefined || settings.escalation_delay_days !== undefined) {
      yield* (yield* TenancyRepo).updateOrganization(org.id, settings)
    }
    const ids = yield* Ids
    const [t] = timestamps(1)
    const contract: Contract = {
      id: ContractId.make(yield* ids.uuid),
      name: "Master services agreement",
      created_at: t!,
      updated_at: t!
    }
    yield* (yield* ContractRepo).insert(org.live, contract)
    return { ...org, contract }
  })

/** Inserts obligations with increasing created_at, returning them in insertion order. */
const insertAll = (tenant: Tenant, contractId: ContractId, specs: ReadonlyArray<Partial<ObligationRecord>>) =>
  Effect.gen(function*() {
    const repo = yield* ObligationRepo
    const ids = yield* Ids
    const at = timestamps(specs.length)
    const made: Array<ObligationRecord> = []
    for (const [i, spec] of specs.entries()) {
      const o = obligation(yield* ids.uuid, contractId, at[i]!, spec)
      yield* repo.insert(tenant, o)
      made.push(o)
    }
    return made
  })

const idsOf = (rows: ReadonlyArray<{ readonly id: string }>) => rows.map((r) => r.id).sort()
const claimedIds = (claimed: ReadonlyArray<{ readonly obligationId: string }>) => claimed.map((c) => c.obligationId).sort()

/** The ObligationRepo and Notifier contracts, and the monitor's exactly-once guarantee on them. */
export const obligationsConformance = (
  name: string,
  storage: Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>
) =>
  describe(`ObligationRepo and Notifier conformance: ${name}`, () => {
    layer(ObligationMonitor.layer.pipe(Layer.provideMerge(storage)), { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("round-trips every stored field and reads the names and the next obligation with the row", () =>
        Effect.gen(function*() {
          const repo = yield* ObligationRepo
          const tenancy = yield* TenancyRepo
          const ids = yield* Ids
          const org = yield* orgWithContract()
          const [t0, t1, t2] = timestamps(3)
          const user = { id: UserId.make(yield* ids.uuid), email: `assignee-${yield* ids.uuid}@example.test`, name: "Ana Pop", created_at: t0! }
          yield* tenancy.insertUser(user, null)
          yield* tenancy.upsertMembership(org.id, user.id, "member", t0!)
          const full = obligation(yield* ids.uuid, org.contract.id, t0!, {
            title: "Quarterly usage report",
            type: "report",
            due_date: "2092-02-29",
            recurrence: "quarterly",
            recurrence_anchor_day: 31,
            remind_days_before: 365,
            obligor: "counterparty",
            assignee_user_id: user.id,
            clause_label: "§4.2",
            clause_excerpt: "The supplier reports usage every quarter.",
            description: "Send the report by email",
            evidence_document_id: yield* ids.uuid,
            evidence_note: "Sent on time",
            reminder_sent_at: t1!,
            overdue_notified_at: t1!,
            escalated_at: t2!
          })
          yield* repo.insert(org.live, full)
          assert.deepStrictEqual(
            yield* repo.find(org.live, full.id),
            Option.some({ ...full, contract_name: "Master services agreement", assignee_name: "Ana Pop", next_obligation_id: null })
          )
          // Names are read, not copied: a renamed contract shows at once.
          yield* (yield* ContractRepo).update(org.live, { ...org.contract, name: "MSA 2091" })
          assert.strictEqual(Option.getOrThrow(yield* repo.find(org.live, full.id)).contract_name, "MSA 2091")

          const changed = { ...full, status: "completed" as const, completed_at: t2!, evidence_note: null, updated_at: t2! }
          yield* repo.update(org.live, changed)
          const successor = obligation(yield* ids.uuid, org.contract.id, t2!, { previous_obligation_id: full.id, due_date: "2092-05-31" })
          yield* repo.insert(org.live, successor)
          const found = Option.getOrThrow(yield* repo.find(org.live, full.id, { forUpdate: true }))
          assert.strictEqual(found.status, "completed")
          assert.isNull(found.evidence_note)
          assert.strictEqual(found.next_obligation_id, successor.id)
          assert.strictEqual(Option.getOrThrow(yield* repo.find(org.live, successor.id)).previous_obligation_id, full.id)

          // Never visible, nor changed, through another tenant.
          assert.isTrue(Option.isNone(yield* repo.find(org.sandbox, full.id)))
          const other = yield* freshOrganization
          assert.isTrue(Option.isNone(yield* repo.find(other.live, full.id)))
          yield* repo.update(other.live, { ...changed, title: "Hijacked" })
          assert.strictEqual(Option.getOrThrow(yield* repo.find(org.live, full.id)).title, "Quarterly usage report")
          assert.strictEqual((yield* repo.list(org.sandbox, {}, "2091-01-01", yield* pageRequest({}))).meta.total, 0)
        }))

      it.effect("keeps at most one successor that is not cancelled", () =>
        Effect.gen(function*() {
          const repo = yield* ObligationRepo
          const ids = yield* Ids
          const org = yield* orgWithContract()
          const [first] = yield* insertAll(org.live, org.contract.id, [{ status: "completed" }])
          const [t] = timestamps(1, Date.UTC(2026, 1, 1))
          const next = obligation(yield* ids.uuid, org.contract.id, t!, { previous_obligation_id: first!.id })
          yield* repo.insert(org.live, next)
          const twin = obligation(yield* ids.uuid, org.contract.id, t!, { previous_obligation_id: first!.id })
          assert.strictEqual((yield* Effect.flip(repo.insert(org.live, twin)))._tag, "Conflict")
          assert.isTrue(Option.isNone(yield* repo.find(org.live, twin.id)))
          yield* repo.update(org.live, { ...next, status: "cancelled" })
          yield* repo.insert(org.live, twin)
          assert.strictEqual(Option.getOrThrow(yield* repo.find(org.live, first!.id)).next_obligation_id, twin.id)
          // Bringing the cancelled one back would make two.
          assert.strictEqual((yield* Effect.flip(repo.update(org.live, { ...next, status: "pending" })))._tag, "Conflict")
        }))

      it.effect("filters by bucket in the store with the caller's today, at every boundary", () =>
        Effect.gen(function*() {
          const repo = yield* ObligationRepo
          const org = yield* orgWithContract()
          const made = yield* insertAll(org.live, org.contract.id, [
            { due_date: "2091-03-14" }, // 0: overdue since today
            { due_date: "2091-03-15", remind_days_before: 0 }, // 1: due today, window of one day
            { due_date: "2091-03-22", remind_days_before: 7 }, // 2: window opens today
            { due_date: "2091-03-23", remind_days_before: 7 }, // 3: window opens tomorrow
            { due_date: "2091-03-15", status: "completed" }, // 4
            { due_date: "2091-03-01", status: "cancelled" }, // 5
            { due_date: "2092-03-14", remind_days_before: 365 }, // 6: 365 days back across Feb 29 2092 is today
            { due_date: "2092-03-15", remind_days_before: 365 } // 7: ... and tomorrow
          ])
          const expected = (today: string, indexes: Record<string, ReadonlyArray<number>>) =>
            Effect.gen(function*() {
              const all = yield* pageRequest({ perPage: 100 })
              for (const [bucket, want] of Object.entries(indexes)) {
                const got = yield* repo.list(org.live, { bucket: bucket as ObligationBucket }, today, all)
                assert.deepStrictEqual(idsOf(got.items), idsOf(want.map((i) => made[i]!)), `${bucket} on ${today}`)
                assert.strictEqual(got.meta.total, want.length)
                for (const o of got.items) assert.strictEqual(deriveBucket(o, today), bucket)
              }
            })
          yield* expected("2091-03-15", { overdue: [0], due_soon: [1, 2, 6], upcoming: [3, 7], done: [4, 5] })
          yield* expected("2091-03-16", { overdue: [0, 1], due_soon: [2, 3, 6, 7], upcoming: [], done: [4, 5] })
          yield* expected("2091-03-14", { overdue: [], due_soon: [0], upcoming: [1, 2, 3, 6, 7], done: [4, 5] })
          const both = yield* repo.list(org.live, { bucket: "due_soon", status: "pending", due_to: "2091-12-31" }, "2091-03-15", yield* pageRequest({}))
          assert.deepStrictEqual(idsOf(both.items), idsOf([made[1]!, made[2]!]))
        }))

      it.effect("filters by contract, status, type, obligor, assignee and due range, newest first in pages", () =>
        Effect.gen(function*() {
          const repo = yield* ObligationRepo
          const tenancy = yield* TenancyRepo
          const ids = yield* Ids
          const org = yield* orgWithContract()
          const [t] = timestamps(1)
          const other: Contract = { id: ContractId.make(yield* ids.uuid), name: "Lease", created_at: t!, updated_at: t! }
          yield* (yield* ContractRepo).insert(org.live, other)
          const user = { id: UserId.make(yield* ids.uuid), email: `f-${yield* ids.uuid}@example.test`, name: "Filter", created_at: t! }
          yield* tenancy.insertUser(user, null)
          yield* tenancy.upsertMembership(org.id, user.id, "member", t!)
          const made = yield* insertAll(org.live, org.contract.id, [
            { type: "payment", due_date: "2091-01-10" },
            { type: "report", due_date: "2091-02-10", obligor: "counterparty" },
            { type: "report", due_date: "2091-03-10", assignee_user_id: user.id, status: "completed" },
            { type: "renewal_notice", due_date: "2091-04-10", contract_id: other.id },
            { type: "delivery", due_date: "2091-05-10", assignee_user_id: user.id }
          ])
          const page = yield* pageRequest({})
          const ids_ = (filter: Parameters<ObligationRepo["Service"]["list"]>[1]) =>
            Effect.map(repo.list(org.live, filter, "2091-01-01", page), (p) => p.items.map((o) => o.id))
          const at = (...i: Array<number>) => i.map((n) => made[n]!.id)
          assert.deepStrictEqual(yield* ids_({}), at(4, 3, 2, 1, 0))
          assert.deepStrictEqual(yield* ids_({ contract_id: other.id }), at(3))
          assert.deepStrictEqual(yield* ids_({ status: "completed" }), at(2))
          assert.deepStrictEqual(yield* ids_({ type: "report" }), at(2, 1))
          assert.deepStrictEqual(yield* ids_({ obligor: "counterparty" }), at(1))
          assert.deepStrictEqual(yield* ids_({ assignee_user_id: user.id }), at(4, 2))
          assert.deepStrictEqual(yield* ids_({ due_from: "2091-02-10", due_to: "2091-04-10" }), at(3, 2, 1))
          assert.deepStrictEqual(yield* ids_({ due_from: "2091-02-11", assignee_user_id: user.id, status: "pending" }), at(4))
          const first = yield* repo.list(org.live, {}, "2091-01-01", yield* pageRequest({ perPage: 2 }))
          assert.deepStrictEqual(first.items.map((o) => o.id), at(4, 3))
          const second = yield* repo.list(org.live, {}, "2091-01-01", yield* pageRequest({ perPage: 2, cursor: first.meta.nextCursor! }))
          assert.deepStrictEqual(second.items.map((o) => o.id), at(2, 1))
          assert.strictEqual(second.meta.total, 5)
        }))

      it.effect("claims each notice once, in the organization's time zone, escalations after the overdue notice and the delay", () =>
        Effect.gen(function*() {
          const repo = yield* ObligationRepo
          const org = yield* orgWithContract({ time_zone: "Europe/Bucharest", escalation_delay_days: 3 })
          const made = yield* insertAll(org.live, org.contract.id, [
            { due_date: "2091-03-20", remind_days_before: 7 }, // 0: reminder
            { due_date: "2091-03-14" }, // 1: overdue 1 day
            { due_date: "2091-03-13" }, // 2: overdue 2 days
            { due_date: "2091-03-12" }, // 3: overdue 3 days: escalation
            { due_date: "2091-03-10", status: "completed" }, // 4: nothing
            { due_date: "2091-04-30", remind_days_before: 7 }, // 5: nothing yet
            { due_date: "2091-03-18", reminder_sent_at: "2091-03-11T08:00:00.000Z" } // 6: reminded already
          ])
          const scope = (limit = 100) => ({
            timeZone: "Europe/Bucharest",
            today: "2091-03-15",
            at: "2091-03-15T06:00:00.000Z",
            limit,
            organizationId: org.id
          })
          const claim = (kind: NoticeKind, limit?: number) => Effect.map(repo.claim(kind, scope(limit)), claimedIds)
          assert.deepStrictEqual(yield* repo.timeZonesWithPending(org.id), ["Europe/Bucharest"])
          assert.deepStrictEqual(yield* Effect.map(repo.claim("overdue", { ...scope(), timeZone: "UTC" }), claimedIds), [])
          assert.deepStrictEqual(yield* claim("reminder"), idsOf([made[0]!]))
          assert.deepStrictEqual(yield* claim("reminder"), [])
          // No escalation before its overdue notice.
          assert.deepStrictEqual(yield* claim("escalation"), [])
          const firstTwo = yield* repo.claim("overdue", scope(2))
          assert.strictEqual(firstTwo.length, 2)
          // Oldest due first.
          assert.deepStrictEqual(firstTwo.map((c) => c.dueDate), ["2091-03-12", "2091-03-13"])
          assert.deepStrictEqual(firstTwo[0], {
            tenant: org.live,
            obligationId: made[3]!.id,
            dueDate: "2091-03-12",
            assigneeUserId: null
          })
          assert.deepStrictEqual(yield* claim("overdue"), idsOf([made[1]!]))
          assert.deepStrictEqual(yield* claim("overdue"), [])
          assert.deepStrictEqual(yield* claim("escalation"), idsOf([made[3]!]))
          assert.deepStrictEqual(yield* claim("escalation"), [])
          const marked = Option.getOrThrow(yield* repo.find(org.live, made[3]!.id))
          assert.strictEqual(marked.overdue_notified_at, "2091-03-15T06:00:00.000Z")
          assert.strictEqual(marked.escalated_at, "2091-03-15T06:00:00.000Z")
          assert.isNull(Option.getOrThrow(yield* repo.find(org.live, made[5]!.id)).reminder_sent_at)

          // With no delay, an obligation escalates on its first overdue day.
          const prompt = yield* orgWithContract({ time_zone: "America/Los_Angeles", escalation_delay_days: 0 })
          const [late] = yield* insertAll(prompt.live, prompt.contract.id, [{ due_date: "2091-03-14" }])
          const laScope = { ...scope(), timeZone: "America/Los_Angeles", organizationId: prompt.id }
          assert.deepStrictEqual(claimedIds(yield* repo.claim("overdue", laScope)), [late!.id])
          assert.deepStrictEqual(claimedIds(yield* repo.claim("escalation", laScope)), [late!.id])
        }))

      it.effect("a failed transaction gives back its claim and its notices", () =>
        Effect.gen(function*() {
          const repo = yield* ObligationRepo
          const notifier = yield* Notifier
          const tx = yield* Transactor
          const ids = yield* Ids
          const org = yield* orgWithContract()
          const [o] = yield* insertAll(org.live, org.contract.id, [{ due_date: "2091-03-01" }])
          const scope = { timeZone: "UTC", today: "2091-03-15", at: "2091-03-15T00:00:00.000Z", limit: 10, organizationId: org.id }
          const failed = yield* tx.withTransaction(Effect.gen(function*() {
            for (const c of yield* repo.claim("overdue", scope)) {
              yield* notifier.notify([{
                id: yield* ids.uuid,
                tenant: c.tenant,
                kind: "overdue",
                obligationId: c.obligationId,
                dueDate: c.dueDate,
                recipientUserId: null,
                createdAt: scope.at
              }])
            }
            return yield* Effect.fail("boom" as const)
          })).pipe(Effect.flip)
          assert.strictEqual(failed, "boom")
          assert.deepStrictEqual(yield* notifier.sentFor(org.live, o!.id), [])
          assert.deepStrictEqual(claimedIds(yield* repo.claim("overdue", scope)), [o!.id])
        }))

      it.effect("the monitor sends every notice once, however many passes run, at once or one after another", () =>
        Effect.gen(function*() {
          const monitor = yield* ObligationMonitor
          const notifier = yield* Notifier
          const org = yield* orgWithContract({ time_zone: "Europe/Bucharest", escalation_delay_days: 7 })
          const made = yield* insertAll(org.live, org.contract.id, [
            { due_date: "2091-03-15" }, // due today in Bucharest: reminder, then overdue after local midnight
            { due_date: "2091-03-01" }, // overdue 14 days: notice and escalation
            { due_date: "2091-03-10" }, // overdue 5 days: notice only
            { due_date: "2091-05-01" } // upcoming: nothing
          ])
          const scope = { organizationId: org.id }
          // 23:59:59 in Bucharest (UTC+2) on March 15th.
          const beforeMidnight = Date.UTC(2091, 2, 15, 21, 59, 59)
          const passes = yield* Effect.all(
            [monitor.runAt(beforeMidnight, scope), monitor.runAt(beforeMidnight, scope), monitor.runAt(beforeMidnight, scope)],
            { concurrency: "unbounded" }
          )
          assert.deepStrictEqual(
            passes.reduce((n, p) => ({ r: n.r + p.reminders, o: n.o + p.overdue, e: n.e + p.escalations }), { r: 0, o: 0, e: 0 }),
            { r: 1, o: 2, e: 1 }
          )
          const again = yield* monitor.runAt(beforeMidnight, scope)
          assert.deepStrictEqual([again.reminders, again.overdue, again.escalations, again.notices.length], [0, 0, 0, 0])
          // One second later it is March 16th in Bucharest (still the 15th in UTC): the first one is overdue.
          const afterMidnight = yield* monitor.runAt(beforeMidnight + 1000, scope)
          assert.deepStrictEqual(afterMidnight.notices.map((n) => [n.kind, n.obligation_id, n.due_date]), [
            ["overdue", made[0]!.id, "2091-03-15"]
          ])
          const kinds = (i: number) => Effect.map(notifier.sentFor(org.live, made[i]!.id), (ns) => ns.map((n) => n.kind))
          assert.deepStrictEqual(yield* kinds(0), ["reminder", "overdue"])
          assert.deepStrictEqual(yield* kinds(1), ["overdue", "escalation"])
          assert.deepStrictEqual(yield* kinds(2), ["overdue"])
          assert.deepStrictEqual(yield* kinds(3), [])
          assert.deepStrictEqual(yield* notifier.sentFor(org.sandbox, made[1]!.id), [])
          const sent = yield* notifier.sentFor(org.live, made[1]!.id)
          assert.deepStrictEqual(sent.map((n) => [n.tenant, n.dueDate, n.recipientUserId, n.createdAt]), [
            [org.live, "2091-03-01", null, new Date(beforeMidnight).toISOString()],
            [org.live, "2091-03-01", null, new Date(beforeMidnight).toISOString()]
          ])
        }))
    })
  })
