import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makeFixture } from "@opsplatform/testing"
import { ApiTestLayer, call, client, expectNotFound, invalidFields, outsiders } from "../support/api.ts"

describe("/v1/contracts handlers over the memory core", () => {
  layer(ApiTestLayer)((it) => {
    it.effect("creates, reads and renames a contract", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const api = yield* client(f.tokens.api)
        const created = yield* api.contracts.create({ payload: { name: "Fleet lease" } })
        expect(created).toEqual({
          data: { id: expect.any(String), name: "Fleet lease", created_at: expect.any(String), updated_at: expect.any(String) },
          error: null
        })
        const id = created.data.id
        expect(yield* api.contracts.get({ params: { id } })).toEqual(created)
        const renamed = yield* api.contracts.update({ params: { id }, payload: { name: "Fleet lease 2026" } })
        expect(renamed.data).toMatchObject({ id, name: "Fleet lease 2026", created_at: created.data.created_at })
        expect(yield* api.contracts.get({ params: { id } })).toEqual(renamed)
        const unchanged = yield* api.contracts.update({ params: { id }, payload: {} })
        expect(unchanged.data.name).toBe("Fleet lease 2026")

        const raw = yield* call("POST", "/v1/contracts", { token: f.tokens.api, body: { name: "Cleaning" } })
        expect(raw.status).toBe(201)
      }))

    it.effect("lists newest first and pages by number and by cursor", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const api = yield* client(f.tokens.api)
        const ids: Array<string> = []
        for (const name of ["One", "Two", "Three", "Four", "Five"]) {
          ids.unshift((yield* api.contracts.create({ payload: { name } })).data.id)
        }
        const all = yield* api.contracts.list({ query: {} })
        expect(all.data.map((c) => c.id)).toEqual(ids)
        expect(all.meta).toEqual({ page: 1, perPage: 25, total: 5, totalPages: 1, nextCursor: null })

        const first = yield* api.contracts.list({ query: { perPage: 2 } })
        expect(first.data.map((c) => c.id)).toEqual(ids.slice(0, 2))
        expect(first.meta).toMatchObject({ page: 1, perPage: 2, total: 5, totalPages: 3 })
        const third = yield* api.contracts.list({ query: { perPage: 2, page: 3 } })
        expect(third.data.map((c) => c.id)).toEqual(ids.slice(4))
        expect(third.meta.nextCursor).toBeNull()

        const walked: Array<string> = []
        let query: { readonly perPage: number; readonly cursor?: string } = { perPage: 2 }
        while (true) {
          const page = yield* api.contracts.list({ query })
          walked.push(...page.data.map((c) => c.id))
          if (page.meta.nextCursor === null) break
          query = { perPage: 2, cursor: page.meta.nextCursor }
        }
        expect(walked).toEqual(ids)
      }))

    it.effect("answers 404 for another organization's or environment's contract, and changes nothing", () =>
      Effect.gen(function*() {
        const owner = yield* makeFixture()
        const mine = yield* client(owner.tokens.api)
        const created = yield* mine.contracts.create({ payload: { name: "Private" } })
        const id = created.data.id
        for (const api of yield* outsiders(owner)) {
          expectNotFound(yield* Effect.flip(api.contracts.get({ params: { id } })))
          expectNotFound(yield* Effect.flip(api.contracts.update({ params: { id }, payload: { name: "Taken" } })))
          expect((yield* api.contracts.list({ query: {} })).data).toEqual([])
        }
        expect(yield* mine.contracts.get({ params: { id } })).toEqual(created)
      }))

    it.effect("refuses invalid input with 400 validation_failed naming the field", () =>
      Effect.gen(function*() {
        const f = yield* makeFixture()
        const token = f.tokens.api
        const cases: ReadonlyArray<readonly [string, object]> = [
          ["name", { name: " " }],
          ["name", {}],
          ["name", { name: "x".repeat(201) }],
          ["status", { name: "Ok", status: "active" }]
        ]
        for (const [field, body] of cases) {
          expect(invalidFields(yield* call("POST", "/v1/contracts", { token, body }), JSON.stringify(body))).toEqual([field])
        }
        const id = (yield* call("POST", "/v1/contracts", { token, body: { name: "Kept" } })).json.data.id
        const blank = yield* call("PATCH", `/v1/contracts/${id}`, { token, body: { name: "" } })
        expect(invalidFields(blank)).toEqual(["name"])
        expect((yield* call("GET", `/v1/contracts/${id}`, { token })).json.data.name).toBe("Kept")
        const badId = yield* call("PATCH", "/v1/contracts/42", { token, body: { name: "X" } })
        expect(invalidFields(badId)).toEqual(["id"])
        const badPage = yield* call("GET", "/v1/contracts?perPage=0", { token })
        expect(invalidFields(badPage)).toEqual(["perPage"])
      }))
  })
})
