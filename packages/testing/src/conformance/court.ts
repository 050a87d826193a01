import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import type { CoreLayers } from "@opsplatform/core"
import { Court } from "@opsplatform/core/court/Court"
import { CourtRepo } from "@opsplatform/core/court/CourtRepo"
import { type CourtCase, CourtCaseId, type Hearing, HearingId } from "@opsplatform/core/court/model"
import { courtHearingEventId, type OutboxEvent } from "@opsplatform/core/events/catalog"
import { Outbox } from "@opsplatform/core/events/Outbox"
import { Ids } from "@opsplatform/core/shared/Ids"
import { pageRequest } from "@opsplatform/core/shared/pagination"
import { freshOrganization, timestamps } from "./support.ts"

type Storage = Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>
type CountEvents = (organizationId: string, eventId: string) => Effect.Effect<number, unknown, CoreLayers.StoragePorts | Ids>

const caseRecord = (id: string, number: string, at: string, overrides: Partial<CourtCase> = {}): CourtCase => ({
  id: CourtCaseId.make(id),
  number,
  court: "Tribunalul București",
  subject: "pretenții",
  parties: [{ name: "Alfa SRL", role: "reclamant" }, { name: "Beta SA", role: "pârât" }],
  panel: "C5",
  status: "open",
  notes: null,
  created_at: at,
  updated_at: at,
  ...overrides
})

const hearingRecord = (id: string, caseId: string, at: string, overrides: Partial<Hearing> = {}): Hearing => ({
  id: HearingId.make(id),
  case_id: CourtCaseId.make(caseId),
  hearing_date: "2026-04-15",
  court: "Tribunalul București",
  panel: "C5",
  solution: null,
  notes: null,
  created_at: at,
  updated_at: at,
  ...overrides
})

/** The CourtRepo contract: every implementation must pass it unchanged. */
export const courtRepoConformance = (name: string, storage: Storage) =>
  describe(`CourtRepo conformance: ${name}`, () => {
    layer(storage, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("stores a case with its parties and its hearings, and gives them back as stored", () =>
        Effect.gen(function*() {
          const repo = yield* CourtRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const [t0, t1, t2] = timestamps(3)
          const c = caseRecord(yield* ids.uuid, "1234/3/2026", t0!)
          yield* repo.insert(org.live, c)
          assert.deepStrictEqual(yield* repo.find(org.live, c.id), Option.some(c))
          const changed = { ...c, parties: [], status: "suspended" as const, notes: "Suspendat (art. 242)", updated_at: t1! }
          yield* repo.update(org.live, changed)
          assert.deepStrictEqual(yield* repo.find(org.live, c.id, { forUpdate: true }), Option.some(changed))
          const first = hearingRecord(yield* ids.uuid, c.id, t1!)
          const second = hearingRecord(yield* ids.uuid, c.id, t2!, { hearing_date: "9999-12-31", solution: "Amână cauza" })
          yield* repo.insertHearing(org.live, first)
          yield* repo.insertHearing(org.live, second)
          assert.deepStrictEqual(yield* repo.findHearing(org.live, c.id, second.id), Option.some(second))
          const listed = yield* repo.listHearings(org.live, c.id, yield* pageRequest({}))
          assert.deepStrictEqual([listed.items, listed.meta.total], [[second, first], 2])
          const moved = { ...first, hearing_date: "2026-05-20", court: "Curtea de Apel București", updated_at: t2! }
          yield* repo.updateHearing(org.live, moved)
          assert.deepStrictEqual(yield* repo.findHearing(org.live, c.id, first.id), Option.some(moved))
          assert.isTrue(yield* repo.removeHearing(org.live, c.id, first.id))
          assert.isFalse(yield* repo.removeHearing(org.live, c.id, first.id))
          // Removing the case removes its hearings.
          assert.isTrue(yield* repo.remove(org.live, c.id))
          assert.isTrue(Option.isNone(yield* repo.findHearing(org.live, c.id, second.id)))
          assert.isFalse(yield* repo.remove(org.live, c.id))
        }))

      it.effect("never shows a case or a hearing to another organization or environment, or a hearing under another case", () =>
        Effect.gen(function*() {
          const repo = yield* CourtRepo
          const ids = yield* Ids
          const a = yield* freshOrganization
          const b = yield* freshOrganization
          const [t0] = timestamps(1)
          const c = caseRecord(yield* ids.uuid, "77/2/2025", t0!)
          const otherCase = caseRecord(yield* ids.uuid, "78/2/2025", t0!)
          yield* repo.insert(a.live, c)
          yield* repo.insert(a.live, otherCase)
          const h = hearingRecord(yield* ids.uuid, c.id, t0!)
          yield* repo.insertHearing(a.live, h)
          assert.isTrue(Option.isNone(yield* repo.findHearing(a.live, otherCase.id, h.id)))
          assert.isFalse(yield* repo.removeHearing(a.live, otherCase.id, h.id))
          for (const other of [a.sandbox, b.live]) {
            assert.isTrue(Option.isNone(yield* repo.find(other, c.id)))
            assert.isTrue(Option.isNone(yield* repo.findHearing(other, c.id, h.id)))
            assert.strictEqual((yield* repo.listHearings(other, c.id, yield* pageRequest({}))).meta.total, 0)
            assert.strictEqual((yield* repo.list(other, {}, yield* pageRequest({}))).meta.total, 0)
            assert.isFalse(yield* repo.removeHearing(other, c.id, h.id))
            assert.isFalse(yield* repo.remove(other, c.id))
            yield* repo.update(other, { ...c, court: "Hijacked" })
            yield* repo.updateHearing(other, { ...h, court: "Hijacked" })
          }
          assert.strictEqual(Option.getOrThrow(yield* repo.find(a.live, c.id)).court, c.court)
          assert.strictEqual(Option.getOrThrow(yield* repo.findHearing(a.live, c.id, h.id)).court, h.court)
        }))

      it.effect("holds one case per file number in a tenant, and lists newest first filtered by status", () =>
        Effect.gen(function*() {
          const repo = yield* CourtRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const at = timestamps(3)
          yield* repo.insert(org.live, caseRecord(yield* ids.uuid, "1/3/2026", at[0]!))
          const twin = caseRecord(yield* ids.uuid, "1/3/2026", at[1]!)
          assert.strictEqual((yield* Effect.flip(repo.insert(org.live, twin)))._tag, "Conflict")
          yield* repo.insert(org.sandbox, twin)
          yield* repo.insert(org.live, caseRecord(yield* ids.uuid, "2/3/2026", at[1]!, { status: "closed" }))
          const third = caseRecord(yield* ids.uuid, "3/3/2026", at[2]!)
          yield* repo.insert(org.live, third)
          assert.strictEqual((yield* Effect.flip(repo.update(org.live, { ...third, number: "1/3/2026" })))._tag, "Conflict")
          const numbers = (p: { items: ReadonlyArray<CourtCase> }) => p.items.map((c) => c.number)
          assert.deepStrictEqual(numbers(yield* repo.list(org.live, {}, yield* pageRequest({}))), ["3/3/2026", "2/3/2026", "1/3/2026"])
          assert.deepStrictEqual(numbers(yield* repo.list(org.live, { status: "open" }, yield* pageRequest({}))), ["3/3/2026", "1/3/2026"])
        }))
    })
  })

const FAIL_AFTER_PUBLISH = "Fail after publish"

/**
 * The Court service on a storage: adding a hearing stores it and its
 * `court_case.hearing_added` event together, with the spec's four fields.
 */
export const courtServiceConformance = (name: string, storage: Storage, countEvents: CountEvents) => {
  const attempted: Array<OutboxEvent> = []
  // Fails a hearing held at the court FAIL_AFTER_PUBLISH after its event was stored.
  const failing = Layer.effect(
    Outbox,
    Effect.map(Outbox, (outbox) =>
      Outbox.of({
        publish: (tenant, event) =>
          Effect.flatMap(outbox.publish(tenant, event), (stored) => {
            attempted.push(event)
            return event.data.court === FAIL_AFTER_PUBLISH ? Effect.die(new Error("failed after publishing")) : Effect.succeed(stored)
          })
      }))
  )
  const services = Court.layer.pipe(Layer.provide(failing), Layer.provideMerge(storage))

  return describe(`Court service conformance: ${name}`, () => {
    layer(services, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("adding a hearing publishes court_case.hearing_added with the four fields, in its transaction", () =>
        Effect.gen(function*() {
          const court = yield* Court
          const org = yield* freshOrganization
          const c = yield* court.create(org.live, {
            number: "1234 / 3 / 2026",
            court: "Tribunalul București",
            parties: [{ name: "Alfa SRL", role: "reclamant" }],
            panel: "C5"
          })
          assert.deepStrictEqual([c.number, c.status, c.subject], ["1234/3/2026", "open", null])
          const h = yield* court.addHearing(org.live, c.id, { hearing_date: "2026-04-15", panel: "C5", solution: "Amână", notes: "Termen" })
          assert.strictEqual(h.court, "Tribunalul București")
          const event = attempted.find((e) => e.eventId === courtHearingEventId(h.id))!
          assert.deepStrictEqual([event.type, event.data], [
            "court_case.hearing_added",
            { id: h.id, case_id: c.id, hearing_date: "2026-04-15", court: "Tribunalul București" }
          ])
          assert.strictEqual(yield* countEvents(org.id, courtHearingEventId(h.id)), 1)
          const elsewhere = yield* court.addHearing(org.live, c.id, { hearing_date: "2026-06-01", court: "Curtea de Apel București" })
          assert.strictEqual(attempted.find((e) => e.eventId === courtHearingEventId(elsewhere.id))!.data.court, "Curtea de Apel București")
          // Editing or removing a hearing publishes nothing.
          const before = attempted.length
          yield* court.updateHearing(org.live, c.id, h.id, { solution: "Admite" })
          yield* court.removeHearing(org.live, c.id, elsewhere.id)
          assert.strictEqual(attempted.length, before)
        }))

      it.effect("a hearing whose event fails after it was stored leaves neither", () =>
        Effect.gen(function*() {
          const court = yield* Court
          const org = yield* freshOrganization
          const c = yield* court.create(org.live, { number: "9/3/2026", court: "Judecătoria Sectorului 1" })
          const exit = yield* Effect.exit(court.addHearing(org.live, c.id, { hearing_date: "2026-04-15", court: FAIL_AFTER_PUBLISH }))
          assert.strictEqual(exit._tag, "Failure")
          const tried = attempted.filter((e) => e.data.case_id === c.id)
          assert.strictEqual(tried.length, 1)
          assert.strictEqual(yield* countEvents(org.id, tried[0]!.eventId), 0)
          assert.strictEqual((yield* court.listHearings(org.live, c.id, yield* pageRequest({}))).meta.total, 0)
        }))

      it.effect("a case's edit that changes nothing keeps it as it was; a hearing of an unknown or foreign case is 404", () =>
        Effect.gen(function*() {
          const court = yield* Court
          const org = yield* freshOrganization
          const other = yield* freshOrganization
          const c = yield* court.create(org.live, { number: "5/3/2026/A1", court: "Tribunalul Cluj" })
          assert.strictEqual(c.number, "5/3/2026/a1")
          assert.deepStrictEqual(yield* court.update(org.live, c.id, { number: "5/3/2026/a1", court: "Tribunalul Cluj" }), c)
          const closed = yield* court.update(org.live, c.id, { status: "closed" })
          assert.strictEqual(closed.status, "closed")
          assert.deepStrictEqual(yield* court.get(org.live, c.id), closed)
          const foreign = yield* Effect.flip(court.addHearing(other.live, c.id, { hearing_date: "2026-04-15" }))
          assert.deepStrictEqual(foreign._tag === "NotFound" && foreign.resource, "court case")
          assert.strictEqual((yield* Effect.flip(court.listHearings(org.sandbox, c.id, yield* pageRequest({}))))._tag, "NotFound")
          assert.strictEqual((yield* Effect.flip(court.create(org.live, { number: "5/3/2026/a1", court: "x" })))._tag, "Conflict")
        }))
    })
  })
}

/** Every suite of the court area against one storage implementation. */
export const courtConformance = (name: string, storage: Storage, countEvents: CountEvents) => {
  courtRepoConformance(name, storage)
  courtServiceConformance(name, storage, countEvents)
}
