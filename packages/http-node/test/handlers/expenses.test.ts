import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makeFixture } from "@opsplatform/testing"
import { ApiTestLayer, call, client, expectNotFound, invalidFields, outsiders } from "../support/api.ts"

const toll = {
  description: "Motorway toll",
  category: "tolls",
  amount: "42.10",
  currency: "RON",
  expense_date: "2026-02-28"
} as const

describe("/v1/expenses handlers over the memory core", () => {
  layer(ApiTestLayer)((it) => {
    it.effect("creates, reads and updates an expense, its amount an exact decimal string", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const api = yield* client(f.tokens.api)
        const created = yield* api.expenses.create({ payload: toll })
        expect(created).toEqual({
          data: { ...toll, id: expect.any(String), status: "draft", location_id: null, created_at: expect.any(String), updated_at: expect.any(String) },
          error: null
        })
        const id = created.data.id
        expect(yield* api.expenses.get({ params: { id } })).toEqual(created)

        const updated = yield* api.expenses.update({ params: { id }, payload: { amount: "40.00", category: "parking" } })
        expect(updated.data).toMatchObject({ id, amount: "40.00", category: "parking", description: "Motorway toll" })
        expect(yield* api.expenses.get({ params: { id } })).toEqual(updated)

        const raw = yield* call("POST", "/v1/expenses", { token: f.tokens.api, body: toll })
        expect(raw.status).toBe(201)
      }))

    it.effect("links an expense to a location of its own organization only", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const other = yield* makeFixture()
        const api = yield* client(f.tokens.api)
        const depot = (yield* api.expenses.create({ payload: toll })).data.id
        const location = (yield* api.locations.create({ payload: { name: "Depot" } })).data.id
        const linked = yield* api.expenses.update({ params: { id: depot }, payload: { location_id: location } })
        expect(linked.data.location_id).toBe(location)
        const foreign = (yield* (yield* client(other.tokens.api)).locations.create({ payload: { name: "Theirs" } })).data.id
        expectNotFound(yield* Effect.flip(api.expenses.create({ payload: { ...toll, location_id: foreign } })))
      }))

    it.effect("moves through the approval flow and refuses a jump with 409 invalid_transition", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const api = yield* client(f.tokens.api)
        const id = (yield* api.expenses.create({ payload: toll })).data.id
        const jump = yield* call("PATCH", `/v1/expenses/${id}`, { token: f.tokens.api, body: { status: "paid" } })
        expect(jump.status).toBe(409)
        expect(jump.json.error.code).toBe("invalid_transition")
        expect(jump.json.error.message).toContain("draft")
        expect(jump.json.error.message).toContain("paid")
        for (const status of ["submitted", "approved", "paid"] as const) {
          expect((yield* api.expenses.update({ params: { id }, payload: { status } })).data.status).toBe(status)
        }
        const locked = yield* call("PATCH", `/v1/expenses/${id}`, { token: f.tokens.api, body: { amount: "1.00" } })
        expect(locked.status).toBe(409)
        expect(locked.json.error.code).toBe("conflict")
      }))

    it.effect("lists newest first, filters on every field, and pages", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const api = yield* client(f.tokens.api)
        const location = (yield* api.locations.create({ payload: { name: "Depot" } })).data.id
        const make = (patch: object) => Effect.map(api.expenses.create({ payload: { ...toll, ...patch } }), (r) => r.data.id)
        const jan = yield* make({ expense_date: "2026-01-15", currency: "EUR" })
        const feb = yield* make({ expense_date: "2026-02-15", category: "fuel", location_id: location })
        const mar = yield* make({ expense_date: "2026-03-15", status: "submitted" })
        const ids = (list: { readonly data: ReadonlyArray<{ readonly id: string }> }) => list.data.map((e) => e.id)

        expect(ids(yield* api.expenses.list({ query: {} }))).toEqual([mar, feb, jan])
        expect(ids(yield* api.expenses.list({ query: { date_from: "2026-02-01" } }))).toEqual([mar, feb])
        expect(ids(yield* api.expenses.list({ query: { date_to: "2026-02-15" } }))).toEqual([feb, jan])
        expect(ids(yield* api.expenses.list({ query: { date_from: "2026-02-15", date_to: "2026-02-15" } }))).toEqual([feb])
        expect(ids(yield* api.expenses.list({ query: { currency: "EUR" } }))).toEqual([jan])
        expect(ids(yield* api.expenses.list({ query: { category: "fuel" } }))).toEqual([feb])
        expect(ids(yield* api.expenses.list({ query: { status: "submitted" } }))).toEqual([mar])
        expect(ids(yield* api.expenses.list({ query: { location_id: location } }))).toEqual([feb])
        expect(ids(yield* api.expenses.list({ query: { category: "tolls", status: "draft" } }))).toEqual([jan])

        const first = yield* api.expenses.list({ query: { perPage: 2 } })
        expect(ids(first)).toEqual([mar, feb])
        expect(first.meta).toMatchObject({ page: 1, perPage: 2, total: 3, totalPages: 2 })
        expect(ids(yield* api.expenses.list({ query: { perPage: 2, page: 2 } }))).toEqual([jan])
        expect(ids(yield* api.expenses.list({ query: { perPage: 2, cursor: first.meta.nextCursor! } }))).toEqual([jan])
      }))

    it.effect("answers 404 for another organization's or environment's expense, and changes nothing", () =>
      Effect.gen(function*() {
        const owner = yield* makeFixture()
        const mine = yield* client(owner.tokens.api)
        const created = yield* mine.expenses.create({ payload: toll })
        const id = created.data.id
        for (const api of yield* outsiders(owner)) {
          expectNotFound(yield* Effect.flip(api.expenses.get({ params: { id } })))
          expectNotFound(yield* Effect.flip(api.expenses.update({ params: { id }, payload: { amount: "0.01" } })))
          expect((yield* api.expenses.list({ query: {} })).data).toEqual([])
        }
        expect(yield* mine.expenses.get({ params: { id } })).toEqual(created)
      }))

    it.effect("refuses invalid input with 400 validation_failed naming the field", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const token = f.tokens.api
        const cases: ReadonlyArray<readonly [string, object]> = [
          ["amount", { amount: "42.1" }],
          ["amount", { amount: "-1.00" }],
          ["amount", { amount: 42.1 }],
          ["currency", { currency: "eur" }],
          ["expense_date", { expense_date: "2026-02-30" }],
          ["category", { category: "snacks" }],
          ["description", { description: "" }],
          ["status", { status: "paid" }],
          ["location_id", { location_id: "depot-1" }]
        ]
        for (const [field, patch] of cases) {
          const res = yield* call("POST", "/v1/expenses", { token, body: { ...toll, ...patch } })
          expect(invalidFields(res, JSON.stringify(patch))).toEqual([field])
        }
        const missing = yield* call("POST", "/v1/expenses", { token, body: { description: "No amount" } })
        expect(invalidFields(missing)).toEqual(["amount", "category", "currency", "expense_date"])
        const id = (yield* call("POST", "/v1/expenses", { token, body: toll })).json.data.id
        const badPatch = yield* call("PATCH", `/v1/expenses/${id}`, { token, body: { amount: "1", colour: "red" } })
        expect(invalidFields(badPatch)).toEqual(["amount", "colour"])
        for (const [query, field] of [["date_from=28.02.2026", "date_from"], ["status=lost", "status"], ["location_id=x", "location_id"]]) {
          expect(invalidFields(yield* call("GET", `/v1/expenses?${query}`, { token }), query)).toEqual([field])
        }
      }))
  })
})
