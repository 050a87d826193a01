import { assert, describe, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import {
  Contracts,
  ObligationModel,
  ObligationMonitor,
  ObligationRepo,
  Obligations,
  Pagination,
  Tenancy,
  TenancyRepo
} from "@opsplatform/core"
import { makeFixture, MemoryCore, recordedNotices } from "@opsplatform/testing"

/** A fixture organization in `time_zone`, with a contract in its live environment. */
const setup = (settings: { readonly time_zone: string; readonly escalation_delay_days?: number }) =>
  Effect.gen(function*() {
    const f = yield* makeFixture()
    yield* (yield* Tenancy.Tenancy).updateSettings(f.organizationId, settings)
    const contract = yield* (yield* Contracts.Contracts).create(f.live, { name: "Supply agreement" })
    const create = (input: Partial<ObligationModel.ObligationCreate> & { readonly due_date: string }) =>
      Effect.flatMap(Obligations.Obligations, (o) =>
        o.create(f.live, { contract_id: contract.id, title: "Pay the supplier", type: "payment", ...input }))
    return { f, contract, create }
  }).pipe(Effect.orDie)

const bucketIds = (tenant: { organizationId: string; environment: "live" | "sandbox" }, bucket: ObligationModel.ObligationBucket) =>
  Effect.gen(function*() {
    const page = yield* (yield* Obligations.Obligations).list(tenant, { bucket }, yield* Pagination.pageRequest({}))
    return page.items.map((o) => o.id)
  })

const pass = (organizationId: string) =>
  Effect.map(
    Effect.flatMap(ObligationMonitor.ObligationMonitor, (m) => m.run({ organizationId })),
    (s) => s.notices.map((n) => `${n.kind}:${n.due_date}`)
  )

describe("contract obligations on memory storage, on the test clock", () => {
  layer(MemoryCore())((it) => {
    it.effect("turn overdue at midnight in Bucharest while UTC is still on the due date", () =>
      Effect.gen(function*() {
        const obligations = yield* Obligations.Obligations
        const { create, f } = yield* setup({ time_zone: "Europe/Bucharest" })
        // 23:59:59 on January 14th in Bucharest (UTC+2).
        yield* TestClock.setTime(Date.UTC(2026, 0, 14, 21, 59, 59))
        const o = yield* create({ due_date: "2026-01-14", remind_days_before: 0 })
        assert.strictEqual(o.bucket, "due_soon")
        assert.deepStrictEqual(yield* bucketIds(f.live, "due_soon"), [o.id])
        assert.deepStrictEqual(yield* pass(f.organizationId), ["reminder:2026-01-14"])
        yield* TestClock.adjust("1 second")
        assert.strictEqual((yield* obligations.get(f.live, o.id)).bucket, "overdue")
        assert.deepStrictEqual(yield* bucketIds(f.live, "overdue"), [o.id])
        assert.deepStrictEqual(yield* bucketIds(f.live, "due_soon"), [])
        assert.deepStrictEqual(yield* pass(f.organizationId), ["overdue:2026-01-14"])
        assert.deepStrictEqual(yield* pass(f.organizationId), [])
        const notice = (yield* recordedNotices).filter((n) => n.obligationId === o.id)
        assert.deepStrictEqual(notice.map((n) => [n.kind, n.createdAt]), [
          ["reminder", "2026-01-14T21:59:59.000Z"],
          ["overdue", "2026-01-14T22:00:00.000Z"]
        ])
        assert.strictEqual((yield* obligations.get(f.live, o.id)).overdue_notified_at, "2026-01-14T22:00:00.000Z")
      }))

    it.effect("stay on the due date in Los Angeles after UTC midnight, until local midnight", () =>
      Effect.gen(function*() {
        const obligations = yield* Obligations.Obligations
        const { create, f } = yield* setup({ time_zone: "America/Los_Angeles" })
        yield* TestClock.setTime(Date.UTC(2026, 0, 15, 0, 0, 0))
        const o = yield* create({ due_date: "2026-01-14" })
        assert.strictEqual(o.bucket, "due_soon")
        assert.deepStrictEqual(yield* pass(f.organizationId), ["reminder:2026-01-14"])
        yield* TestClock.setTime(Date.UTC(2026, 0, 15, 7, 59, 59))
        assert.strictEqual((yield* obligations.get(f.live, o.id)).bucket, "due_soon")
        assert.deepStrictEqual(yield* pass(f.organizationId), [])
        yield* TestClock.adjust("1 second")
        assert.strictEqual((yield* obligations.get(f.live, o.id)).bucket, "overdue")
        assert.deepStrictEqual(yield* pass(f.organizationId), ["overdue:2026-01-14"])
      }))

    it.effect("cross midnight on the night summer time starts", () =>
      Effect.gen(function*() {
        const obligations = yield* Obligations.Obligations
        const { create, f } = yield* setup({ time_zone: "Europe/Bucharest" })
        // Clocks go to UTC+3 at 03:00 on March 29th 2026: that day's midnight is 21:00 UTC.
        yield* TestClock.setTime(Date.UTC(2026, 2, 29, 20, 59, 59))
        const o = yield* create({ due_date: "2026-03-29" })
        assert.strictEqual(o.bucket, "due_soon")
        yield* TestClock.adjust("1 second")
        assert.strictEqual((yield* obligations.get(f.live, o.id)).bucket, "overdue")
      }))

    it.effect("escalate once the organization's delay has passed, counted in its own days", () =>
      Effect.gen(function*() {
        const { create, f } = yield* setup({ time_zone: "Europe/Bucharest", escalation_delay_days: 3 })
        yield* TestClock.setTime(Date.UTC(2026, 0, 1, 12))
        yield* create({ due_date: "2026-01-10", remind_days_before: 2 })
        assert.deepStrictEqual(yield* pass(f.organizationId), [])
        // Each step: 00:00:30 local time on the next day.
        const day = (d: number) => TestClock.setTime(Date.UTC(2026, 0, d - 1, 22, 0, 30))
        const sent: Array<[number, ReadonlyArray<string>]> = []
        for (const d of [8, 9, 10, 11, 12, 13, 14]) {
          yield* day(d)
          sent.push([d, yield* pass(f.organizationId)])
        }
        assert.deepStrictEqual(sent, [
          [8, ["reminder:2026-01-10"]],
          [9, []],
          [10, []],
          [11, ["overdue:2026-01-10"]],
          [12, []],
          [13, ["escalation:2026-01-10"]],
          [14, []]
        ])
      }))

    it.effect("a changed due date resets the overdue notice and the escalation, and a past one is notified again", () =>
      Effect.gen(function*() {
        const obligations = yield* Obligations.Obligations
        const { create, f } = yield* setup({ time_zone: "Europe/Bucharest", escalation_delay_days: 3 })
        yield* TestClock.setTime(Date.UTC(2026, 0, 20, 10))
        const o = yield* create({ due_date: "2026-01-10" })
        assert.deepStrictEqual(yield* pass(f.organizationId), ["overdue:2026-01-10", "escalation:2026-01-10"])
        const titled = yield* obligations.update(f.live, o.id, { title: "Pay the supplier (late)", due_date: "2026-01-10" })
        assert.isNotNull(titled.overdue_notified_at)
        assert.isNotNull(titled.escalated_at)
        const moved = yield* obligations.update(f.live, o.id, { due_date: "2026-01-18" })
        assert.isNull(moved.overdue_notified_at)
        assert.isNull(moved.escalated_at)
        assert.strictEqual(moved.bucket, "overdue")
        assert.deepStrictEqual(yield* pass(f.organizationId), ["overdue:2026-01-18"])
        yield* TestClock.adjust("1 day")
        assert.deepStrictEqual(yield* pass(f.organizationId), ["escalation:2026-01-18"])
        // A date in the future: nothing to notify until it comes.
        const future = yield* obligations.update(f.live, o.id, { due_date: "2026-03-01", remind_days_before: 7 })
        assert.strictEqual(future.bucket, "upcoming")
        assert.deepStrictEqual(yield* pass(f.organizationId), [])
        const kinds = (yield* recordedNotices).filter((n) => n.obligationId === o.id).map((n) => `${n.kind}:${n.dueDate}`)
        assert.deepStrictEqual(kinds, [
          "overdue:2026-01-10",
          "escalation:2026-01-10",
          "overdue:2026-01-18",
          "escalation:2026-01-18"
        ])
      }))

    it.effect("a reminder is sent once per due date and window; changing either allows a new one", () =>
      Effect.gen(function*() {
        const obligations = yield* Obligations.Obligations
        const { create, f } = yield* setup({ time_zone: "UTC" })
        yield* TestClock.setTime(Date.UTC(2026, 4, 1, 9))
        const o = yield* create({ due_date: "2026-05-05", remind_days_before: 7 })
        assert.deepStrictEqual(yield* pass(f.organizationId), ["reminder:2026-05-05"])
        yield* obligations.update(f.live, o.id, { title: "Renamed", remind_days_before: 7 })
        assert.deepStrictEqual(yield* pass(f.organizationId), [])
        yield* obligations.update(f.live, o.id, { remind_days_before: 4 })
        assert.deepStrictEqual(yield* pass(f.organizationId), ["reminder:2026-05-05"])
        yield* obligations.update(f.live, o.id, { due_date: "2026-05-04" })
        assert.deepStrictEqual(yield* pass(f.organizationId), ["reminder:2026-05-04"])
        // Outside the window after the change: no reminder until the window opens.
        yield* obligations.update(f.live, o.id, { due_date: "2026-06-30" })
        assert.deepStrictEqual(yield* pass(f.organizationId), [])
      }))

    it.effect("completing a monthly obligation creates the next one, keeping the month-end anchor through Feb 29", () =>
      Effect.gen(function*() {
        const obligations = yield* Obligations.Obligations
        const { create, f } = yield* setup({ time_zone: "UTC" })
        yield* TestClock.setTime(Date.UTC(2027, 11, 1))
        const jan = yield* create({ due_date: "2028-01-31", recurrence: "monthly", remind_days_before: 3, clause_label: "§7" })
        const done = yield* obligations.complete(f.live, jan.id, { evidence_note: "Paid" })
        assert.strictEqual(done.status, "completed")
        assert.strictEqual(done.completed_at, "2027-12-01T00:00:00.000Z")
        assert.isTrue(done.has_evidence)
        const feb = yield* obligations.get(f.live, done.next_obligation_id!)
        assert.deepStrictEqual(
          [feb.due_date, feb.status, feb.previous_obligation_id, feb.recurrence, feb.remind_days_before, feb.clause_label, feb.has_evidence],
          ["2028-02-29", "pending", jan.id, "monthly", 3, "§7", false]
        )
        const mar = yield* obligations.get(f.live, (yield* obligations.complete(f.live, feb.id, {})).next_obligation_id!)
        assert.strictEqual(mar.due_date, "2028-03-31")
        assert.strictEqual(mar.previous_obligation_id, feb.id)
        // A new due date is a new anchor.
        yield* obligations.update(f.live, mar.id, { due_date: "2028-04-30" })
        const may = yield* obligations.get(f.live, (yield* obligations.complete(f.live, mar.id, {})).next_obligation_id!)
        assert.strictEqual(may.due_date, "2028-05-30")
        // One-off obligations end with their completion.
        const once = yield* create({ due_date: "2028-01-31" })
        assert.isNull((yield* obligations.complete(f.live, once.id, {})).next_obligation_id)
      }))

    it.effect("reopening is refused while the next obligation stands, and never leaves two open successors", () =>
      Effect.gen(function*() {
        const obligations = yield* Obligations.Obligations
        const { create, f } = yield* setup({ time_zone: "UTC" })
        yield* TestClock.setTime(Date.UTC(2027, 0, 1))
        const q1 = yield* create({ due_date: "2027-03-31", recurrence: "quarterly" })
        const next = (yield* obligations.complete(f.live, q1.id, {})).next_obligation_id!
        const refused = yield* Effect.flip(obligations.reopen(f.live, q1.id))
        assert.strictEqual(refused._tag, "Conflict")
        assert.include(refused.message, next)
        yield* obligations.cancel(f.live, next)
        const reopened = yield* obligations.reopen(f.live, q1.id)
        assert.deepStrictEqual([reopened.status, reopened.completed_at, reopened.next_obligation_id], ["pending", null, null])
        const again = (yield* obligations.complete(f.live, q1.id, {})).next_obligation_id!
        assert.notStrictEqual(again, next)
        const successors = (yield* obligations.list(f.live, { status: "pending" }, yield* Pagination.pageRequest({}))).items
          .filter((o) => o.previous_obligation_id === q1.id)
        assert.deepStrictEqual(successors.map((o) => [o.id, o.due_date]), [[again, "2027-06-30"]])
        // Every other move is refused, naming both states.
        const transition = yield* Effect.flip(obligations.complete(f.live, q1.id, {}))
        assert.strictEqual(transition._tag, "InvalidTransition")
        assert.strictEqual(transition.message, "A contract obligation cannot go from completed to completed")
        const cancelled = yield* Effect.flip(obligations.reopen(f.live, next))
        assert.strictEqual(cancelled.message, "A contract obligation cannot go from cancelled to pending")
        assert.strictEqual((yield* Effect.flip(obligations.update(f.live, next, { title: "x" })))._tag, "Conflict")
      }))

    it.effect("a completion that cannot create its next obligation rolls back entirely", () =>
      Effect.gen(function*() {
        const obligations = yield* Obligations.Obligations
        const repo = yield* ObligationRepo.ObligationRepo
        const { create, f } = yield* setup({ time_zone: "UTC" })
        yield* TestClock.setTime(Date.UTC(2027, 0, 1))
        const o = yield* create({ due_date: "2027-01-31", recurrence: "monthly" })
        // A successor already standing (as a concurrent completion would leave it) makes the insert fail.
        const stored = Option.getOrThrow(yield* repo.find(f.live, o.id))
        const { assignee_name: _a, contract_name: _c, next_obligation_id: _n, ...record } = stored
        yield* repo.insert(f.live, {
          ...record,
          id: ObligationModel.ObligationId.make("00000000-0000-4000-8000-00000000beef"),
          previous_obligation_id: o.id
        })
        const failed = yield* Effect.flip(obligations.complete(f.live, o.id, { evidence_note: "Paid" }))
        assert.strictEqual(failed._tag, "Conflict")
        const after = yield* obligations.get(f.live, o.id)
        assert.deepStrictEqual([after.status, after.completed_at, after.evidence_note], ["pending", null, null])
        const all = (yield* obligations.list(f.live, {}, yield* Pagination.pageRequest({}))).items
        assert.deepStrictEqual(all.map((x) => x.id).sort(), [o.id, "00000000-0000-4000-8000-00000000beef"].sort())
      }))

    it.effect("an assignee must be a member of the organization; a contract must be the tenant's", () =>
      Effect.gen(function*() {
        const obligations = yield* Obligations.Obligations
        const tenancy = yield* Tenancy.Tenancy
        const { contract, create, f } = yield* setup({ time_zone: "UTC" })
        const other = yield* makeFixture()
        const mine = yield* create({ due_date: "2027-01-31", assignee_user_id: f.userId })
        assert.strictEqual(mine.assignee_name, (yield* tenancy.getMember(f.organizationId, f.userId)).name)
        const stranger = yield* Effect.flip(create({ due_date: "2027-01-31", assignee_user_id: other.userId }))
        assert.deepStrictEqual([stranger._tag, stranger.message], ["NotFound", `No member with id '${other.userId}'`])
        const foreign = yield* Effect.flip(obligations.create(other.live, {
          contract_id: contract.id,
          title: "x",
          type: "custom",
          due_date: "2027-01-31"
        }))
        assert.deepStrictEqual([foreign._tag, foreign.message], ["NotFound", `No contract with id '${contract.id}'`])
        const cleared = yield* obligations.update(f.live, mine.id, { assignee_user_id: null })
        assert.deepStrictEqual([cleared.assignee_user_id, cleared.assignee_name], [null, null])
        assert.strictEqual((yield* Effect.flip(obligations.get(f.sandbox, mine.id)))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(obligations.get(f.live, "not-a-uuid")))._tag, "NotFound")
      }))
  })
})

describe("the obligation monitor over every organization", () => {
  layer(MemoryCore())((it) => {
    it.effect("skips an organization whose stored time zone the runtime does not know, and serves the others", () =>
      Effect.gen(function*() {
        const broken = yield* setup({ time_zone: "UTC" })
        const healthy = yield* setup({ time_zone: "Europe/Bucharest" })
        yield* TestClock.setTime(Date.UTC(2026, 5, 1, 12))
        yield* broken.create({ due_date: "2026-05-01" })
        const late = yield* healthy.create({ due_date: "2026-05-01" })
        // Written behind the service's back, as a zone retired from the time zone database would be.
        yield* (yield* TenancyRepo.TenancyRepo).updateOrganization(broken.f.organizationId, { time_zone: "Atlantis/Capital" })
        const summary = yield* (yield* ObligationMonitor.ObligationMonitor).run()
        assert.deepStrictEqual(summary.notices.map((n) => [n.kind, n.obligation_id]), [
          ["overdue", late.id],
          ["escalation", late.id]
        ])
      }))
  })
})
