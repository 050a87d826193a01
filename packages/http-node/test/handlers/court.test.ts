import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makeFixture, MemoryStore } from "@opsplatform/testing"
import { ApiTestLayer, call, client, expectNotFound, invalidFields, outsiders } from "../support/api.ts"

const hearingEvents = (organizationId: string) =>
  Effect.map(MemoryStore, (store) =>
    [...store.table<{ organizationId: string; eventId: string; type: string; data: Record<string, unknown> }>("outbox_events").values()]
      .filter((e) => e.organizationId === organizationId && e.type === "court_case.hearing_added"))

const newCase = {
  number: "1234 / 3 / 2026",
  court: "Tribunalul București",
  subject: "pretenții",
  parties: [{ name: "Alfa SRL", role: "reclamant" }, { name: "Beta SA", role: "pârât" }],
  panel: "C5",
  notes: "Client confidențial"
}

describe("/v1/court-cases handlers over the memory core", () => {
  layer(ApiTestLayer)((it) => {
    it.effect("keeps a case by its file number, and its hearings; adding one publishes only the spec's four fields", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const api = yield* client(f.tokens.api)
        const created = yield* api.court.create({ payload: newCase })
        expect(created.data).toMatchObject({ ...newCase, number: "1234/3/2026", status: "open" })
        const id = created.data.id
        expect(yield* api.court.get({ params: { id } })).toEqual(created)
        const hearing = yield* api.court.addHearing({
          params: { id },
          payload: { hearing_date: "2026-04-15", panel: "C5", solution: "Amână cauza", notes: "Martor absent" }
        })
        expect(hearing.data).toMatchObject({ case_id: id, hearing_date: "2026-04-15", court: "Tribunalul București", solution: "Amână cauza" })
        const [published] = yield* hearingEvents(f.organizationId)
        expect(published).toMatchObject({
          eventId: `evt_court_hearing_${hearing.data.id}`,
          data: { id: hearing.data.id, case_id: id, hearing_date: "2026-04-15", court: "Tribunalul București" }
        })
        expect(Object.keys(published!.data).sort()).toEqual(["case_id", "court", "hearing_date", "id"])

        const later = yield* api.court.addHearing({ params: { id }, payload: { hearing_date: "2026-05-20", court: "Curtea de Apel București" } })
        const listed = yield* api.court.listHearings({ params: { id }, query: {} })
        expect([listed.data.map((h) => h.id), listed.meta.total]).toEqual([[later.data.id, hearing.data.id], 2])
        const decided = yield* api.court.updateHearing({
          params: { id, hearingId: hearing.data.id },
          payload: { solution: "Admite acțiunea" }
        })
        expect(decided.data).toMatchObject({ solution: "Admite acțiunea", hearing_date: "2026-04-15" })
        expect(yield* api.court.removeHearing({ params: { id, hearingId: later.data.id } })).toEqual({
          data: { id: later.data.id, deleted: true },
          error: null
        })
        expect((yield* hearingEvents(f.organizationId)).length).toBe(2)

        const closed = yield* api.court.update({ params: { id }, payload: { status: "closed", parties: [] } })
        expect(closed.data).toMatchObject({ status: "closed", parties: [] })
        expect((yield* api.court.list({ query: { status: "closed" } })).data.map((c) => c.id)).toEqual([id])
        expect((yield* api.court.list({ query: { status: "open" } })).data).toEqual([])
        yield* api.court.remove({ params: { id } })
        expectNotFound(yield* Effect.flip(api.court.listHearings({ params: { id }, query: {} })))
      }))

    it.effect("refuses bad input naming every field, and a file number taken in the organization with 409", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const token = f.tokens.api
        const invalid = yield* call("POST", "/v1/court-cases", {
          token,
          body: { number: "1234-3-2026", court: " ", status: "won", parties: [{ name: "A" }], judge: "X" }
        })
        expect(invalidFields(invalid)).toEqual(["court", "judge", "number", "parties.0.role", "status"])
        const id = (yield* call("POST", "/v1/court-cases", { token, body: { number: "7/3/2026", court: "Tribunalul Cluj" } })).json.data.id
        const badHearing = yield* call("POST", `/v1/court-cases/${id}/hearings`, { token, body: { hearing_date: "2026-02-30" } })
        expect(invalidFields(badHearing)).toEqual(["hearing_date"])
        expect(invalidFields(yield* call("POST", `/v1/court-cases/${id}/hearings`, { token, body: { hearing_date: "10000-01-01" } })))
          .toEqual(["hearing_date"])
        expect(invalidFields(yield* call("POST", `/v1/court-cases/${id}/hearings`, { token, body: {} }))).toEqual(["hearing_date"])
        // The last day a date can name is a date like any other.
        expect((yield* call("POST", `/v1/court-cases/${id}/hearings`, { token, body: { hearing_date: "9999-12-31" } })).status).toBe(201)
        const twin = yield* call("POST", "/v1/court-cases", { token, body: { number: "7 / 3 / 2026", court: "Tribunalul Cluj" } })
        expect([twin.status, twin.json.error.code]).toEqual([409, "conflict"])
        const badId = yield* call("PATCH", `/v1/court-cases/${id}/hearings/not-a-uuid`, { token, body: { notes: "x" } })
        expect(invalidFields(badId)).toEqual(["hearingId"])
      }))

    it.effect("answers 404 to another organization, the other environment, and a hearing under another case", () =>
      Effect.gen(function*() {
        const owner = yield* makeFixture()
        const mine = yield* client(owner.tokens.api)
        const id = (yield* mine.court.create({ payload: { number: "55/2/2025", court: "Curtea de Apel București" } })).data.id
        const other = (yield* mine.court.create({ payload: { number: "56/2/2025", court: "Curtea de Apel București" } })).data.id
        const hearingId = (yield* mine.court.addHearing({ params: { id }, payload: { hearing_date: "2026-01-10" } })).data.id
        expectNotFound(yield* Effect.flip(mine.court.updateHearing({ params: { id: other, hearingId }, payload: { notes: "x" } })))
        expectNotFound(yield* Effect.flip(mine.court.removeHearing({ params: { id: other, hearingId } })))
        for (const api of yield* outsiders(owner)) {
          expectNotFound(yield* Effect.flip(api.court.get({ params: { id } })))
          expectNotFound(yield* Effect.flip(api.court.addHearing({ params: { id }, payload: { hearing_date: "2026-01-11" } })))
          expectNotFound(yield* Effect.flip(api.court.updateHearing({ params: { id, hearingId }, payload: { notes: "x" } })))
          expectNotFound(yield* Effect.flip(api.court.remove({ params: { id } })))
        }
        expect((yield* mine.court.listHearings({ params: { id }, query: {} })).data.map((h) => [h.id, h.notes])).toEqual([[hearingId, null]])
        expect((yield* hearingEvents(owner.organizationId)).length).toBe(1)
      }))
  })
})
