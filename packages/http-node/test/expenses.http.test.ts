import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Fixture } from "@opsplatform/testing"
import { testDatabases } from "./support/databases.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"

for (const db of testDatabases()) {
  describe(`/v1/expenses over HTTP (${db.name})`, () => {
    let server: TestServer
    let f: Fixture
    beforeAll(async () => {
      server = await startTestServer(db.choice())
      f = await seedFixture(server)
    })
    afterAll(() => server.close())

    const base = { description: "Motorway toll", category: "tolls", amount: "42.10", currency: "RON", expense_date: "2026-02-28" }

    it("creates and reads an expense with its amount as an exact decimal string", async () => {
      const created = await call(server, "POST", "/v1/expenses", { token: f.tokens.api, body: base })
      expect(created.status).toBe(201)
      expect(created.json.data).toMatchObject({ ...base, status: "draft", location_id: null })
      const got = await call(server, "GET", `/v1/expenses/${created.json.data.id}`, { token: f.tokens.api })
      expect(got.json).toEqual({ data: created.json.data, error: null })
    })

    it.each([
      ["amount", { amount: "42.1" }],
      ["amount", { amount: "42" }],
      ["amount", { amount: "-1.00" }],
      ["amount", { amount: 42.1 }],
      ["currency", { currency: "XXX" }],
      ["currency", { currency: "eur" }],
      ["expense_date", { expense_date: "2026-02-30" }],
      ["expense_date", { expense_date: "28.02.2026" }],
      ["category", { category: "snacks" }],
      ["description", { description: "" }]
    ])("refuses a bad %s (%j) naming the field", async (field, patch) => {
      const res = await call(server, "POST", "/v1/expenses", { token: f.tokens.api, body: { ...base, ...patch } })
      expect(res.status).toBe(400)
      expect(res.json.error.code).toBe("validation_failed")
      expect(res.json.error.details.map((d: any) => d.field)).toEqual([field])
    })

    it("moves through the approval flow and refuses a jump with invalid_transition naming both states", async () => {
      const id = (await call(server, "POST", "/v1/expenses", { token: f.tokens.api, body: base })).json.data.id
      const jump = await call(server, "PATCH", `/v1/expenses/${id}`, { token: f.tokens.api, body: { status: "paid" } })
      expect(jump.status).toBe(409)
      expect(jump.json.error.code).toBe("invalid_transition")
      expect(jump.json.error.message).toContain("draft")
      expect(jump.json.error.message).toContain("paid")
      for (const status of ["submitted", "approved", "paid"]) {
        const moved = await call(server, "PATCH", `/v1/expenses/${id}`, { token: f.tokens.api, body: { status } })
        expect(moved.status).toBe(200)
        expect(moved.json.data.status).toBe(status)
      }
      const locked = await call(server, "PATCH", `/v1/expenses/${id}`, { token: f.tokens.api, body: { amount: "1.00" } })
      expect(locked.status).toBe(409)
      expect(locked.json.error.code).toBe("conflict")
    })

    it("filters the list and rejects an unknown filter", async () => {
      const g = await seedFixture(server)
      const mk = (body: object) => call(server, "POST", "/v1/expenses", { token: g.tokens.api, body: { ...base, ...body } })
      const jan = (await mk({ expense_date: "2026-01-15", currency: "EUR" })).json.data.id
      const feb = (await mk({ expense_date: "2026-02-15", category: "fuel" })).json.data.id
      const q = (qs: string) => call(server, "GET", `/v1/expenses?${qs}`, { token: g.tokens.api })
      expect((await q("date_from=2026-02-01")).json.data.map((e: any) => e.id)).toEqual([feb])
      expect((await q("currency=EUR")).json.data.map((e: any) => e.id)).toEqual([jan])
      expect((await q("category=fuel&date_to=2026-02-15")).json.data.map((e: any) => e.id)).toEqual([feb])
      const unknown = await q("colour=red")
      expect(unknown.status).toBe(400)
      expect(unknown.json.error.details).toEqual([{ field: "colour", issue: "is not a field of this request" }])
    })
  })
}
