import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { FiscalModel, FiscalRepo } from "@opsplatform/core"
import { makeFixture } from "@opsplatform/testing"
import { ApiTestLayer, call, client, expectNotFound, invalidFields, outsiders } from "../support/api.ts"

const off = { status: false, effective_date: null }
const status = (inactive: boolean): FiscalModel.FiscalStatus => ({
  cui: "14399840",
  inactive: { status: inactive, effective_date: inactive ? "2026-05-10" : null },
  struck_off: off,
  insolvency: off,
  vat_registered: { status: true, effective_date: "2015-03-01" },
  cash_vat: off
})

describe("/v1/contacts/{id}/fiscal-history handlers over the memory core", () => {
  layer(ApiTestLayer)((it) => {
    it.effect("lists a contact's statuses newest first, by page and by cursor, for its own tenant only", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const api = yield* client(f.tokens.api)
        const contact = (yield* api.contacts.create({ payload: { name: "Client SRL", kind: "customer", vat_number: "RO14399840" } }))
          .data
        expect([contact.fiscal_status, contact.fiscal_checked_at]).toEqual([null, null])
        const empty = yield* api.fiscal.history({ params: { id: contact.id }, query: {} })
        expect(empty).toEqual({ data: [], error: null, meta: { page: 1, perPage: 25, total: 0, totalPages: 0, nextCursor: null } })

        const repo = yield* FiscalRepo.FiscalRepo
        const entries = [
          { day: "2026-05-10", baseline: true, inactive: false, changes: [], event_id: null },
          {
            day: "2026-05-11",
            baseline: false,
            inactive: true,
            changes: [{ kind: "became_inactive" as const, effective_date: "2026-05-10" }],
            event_id: `evt_fsc_${contact.id}_became_inactive_2026-05-10`
          },
          { day: "2026-05-12", baseline: false, inactive: false, changes: [{ kind: "reactivated" as const }], event_id: "evt_x" }
        ]
        for (const [i, e] of entries.entries()) {
          yield* repo.insertSnapshot(f.live, {
            id: FiscalModel.FiscalSnapshotId.make(`00000000-0000-4000-8000-f15ca1${String(i).padStart(6, "0")}`),
            contact_id: contact.id,
            checked_on: e.day,
            status: status(e.inactive),
            baseline: e.baseline,
            changes: e.changes,
            event_id: e.event_id,
            created_at: `${e.day}T04:00:00.000Z`
          })
        }
        const first = yield* api.fiscal.history({ params: { id: contact.id }, query: { perPage: 2 } })
        expect(first.data.map((s) => s.checked_on)).toEqual(["2026-05-12", "2026-05-11"])
        expect(first.data[1]).toEqual({
          id: "00000000-0000-4000-8000-f15ca1000001",
          contact_id: contact.id,
          checked_on: "2026-05-11",
          status: status(true),
          baseline: false,
          changes: [{ kind: "became_inactive", effective_date: "2026-05-10" }],
          event_id: `evt_fsc_${contact.id}_became_inactive_2026-05-10`,
          created_at: "2026-05-11T04:00:00.000Z"
        })
        expect(first.meta).toMatchObject({ total: 3, totalPages: 2 })
        const second = yield* api.fiscal.history({ params: { id: contact.id }, query: { perPage: 2, cursor: first.meta!.nextCursor! } })
        expect(second.data.map((s) => s.checked_on)).toEqual(["2026-05-10"])

        for (const outsider of yield* outsiders(f)) {
          expectNotFound(yield* Effect.flip(outsider.fiscal.history({ params: { id: contact.id }, query: {} })))
        }
        expectNotFound(yield* Effect.flip(api.fiscal.history({ params: { id: "00000000-0000-4000-8000-0000000c0de0" }, query: {} })))
        expect(invalidFields(yield* call("GET", "/v1/contacts/not-a-uuid/fiscal-history", { token: f.tokens.api }))).toEqual(["id"])
        expect(invalidFields(yield* call("GET", `/v1/contacts/${contact.id}/fiscal-history?kind=x`, { token: f.tokens.api })))
          .toEqual(["kind"])
        // The history is part of the contact: contacts:read, and nothing else, opens it.
        expect((yield* call("GET", `/v1/contacts/${contact.id}/fiscal-history`, { token: f.tokens.narrow })).status).toBe(403)
      }))
  })
})
