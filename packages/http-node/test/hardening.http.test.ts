import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Fixture } from "@opsplatform/testing"
import { testDatabases } from "./support/databases.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"

const base64Url = (text: string) => Buffer.from(text).toString("base64url")

/** A cursor as this API writes them, with fields the caller chose. */
const forgedCursor = (fields: Record<string, unknown>) =>
  base64Url(JSON.stringify({ t: "2026-01-01T00:00:00.000Z", i: "00000000-0000-4000-8000-000000000001", p: 2, ...fields }))

for (const db of testDatabases()) {
  describe(`input that once reached a 500 or slipped through (${db.name})`, () => {
    let server: TestServer
    let f: Fixture

    beforeAll(async () => {
      server = await startTestServer(db.choice())
      f = await seedFixture(server)
    })
    afterAll(() => server.close())

    const expectRefusal = (res: Awaited<ReturnType<typeof call>>, status: number, code: string) => {
      expect([res.status, res.json?.error?.code]).toEqual([status, code])
      expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{24}$/)
      expect(res.json.error.requestId).toBe(res.headers.get("x-request-id"))
    }

    it("a tampered cursor (a year beyond 9999, a timestamp in another form) is 400 on every cursor-paged list", async () => {
      for (const t of ["+275760-09-13T00:00:00.000Z", "10000-01-01T00:00:00.000Z", "2026-01-01", "2026-01-01T00:00:00Z"]) {
        for (const path of ["/v1/locations", "/v1/invoices", "/v1/delivery-routes", "/v1/contract-obligations"]) {
          const res = await call(server, "GET", `${path}?cursor=${forgedCursor({ t })}`, { token: f.tokens.api })
          expectRefusal(res, 400, "validation_failed")
          expect(res.json.error.details).toEqual([{ field: "cursor", issue: "is not a cursor this API issued" }])
        }
      }
    })

    it("a cursor of one list is refused by the same list with other filters", async () => {
      for (const name of ["A", "B", "C"]) {
        await call(server, "POST", "/v1/locations", { token: f.tokens.api, body: { name, vertical_type: "retail" } })
      }
      const first = await call(server, "GET", "/v1/locations?vertical_type=retail&perPage=1", { token: f.tokens.api })
      const cursor = first.json.meta.nextCursor
      expect(cursor).toEqual(expect.any(String))
      const same = await call(server, "GET", `/v1/locations?vertical_type=retail&perPage=1&cursor=${cursor}`, { token: f.tokens.api })
      expect([same.status, same.json.meta.page]).toEqual([200, 2])
      const other = await call(server, "GET", `/v1/locations?vertical_type=office&perPage=1&cursor=${cursor}`, { token: f.tokens.api })
      expectRefusal(other, 400, "validation_failed")
      expect(other.json.error.details[0].field).toBe("cursor")
    })

    it("a lone UTF-16 surrogate in any JSON string is 400 naming the field, where it used to reach the database", async () => {
      const lone = await call(server, "PUT", "/v1/sender-address", {
        token: f.tokens.api,
        rawBody: '{"name":"a\\ud800b","line1":"x","city":"y","country":"RO"}'
      })
      expectRefusal(lone, 400, "validation_failed")
      expect(lone.json.error.details).toEqual([{ field: "name", issue: "must not contain a lone UTF-16 surrogate (half of a surrogate pair)" }])
      const nested = await call(server, "PUT", "/v1/courier-rate-card", {
        token: f.tokens.api,
        rawBody: '{"currency":"RON","couriers":[{"name":"\\udc00x","bands":[]}]}'
      })
      expect(nested.json.error.details[0].field).toBe("couriers.0.name")
      // A whole pair is an ordinary character and is kept.
      const pair = await call(server, "POST", "/v1/locations", { token: f.tokens.api, rawBody: '{"name":"Depot \\ud83d\\ude9a"}' })
      expect([pair.status, pair.json.data.name]).toEqual([201, "Depot 🚚"])
    })

    it("an early refusal (a NUL in the body) carries X-Request-Id like every other answer", async () => {
      const res = await call(server, "POST", "/v1/locations", { token: f.tokens.api, rawBody: '{"name":"a\\u0000"}' })
      expectRefusal(res, 400, "validation_failed")
    })

    it("a wrong method on a path the API serves is 405 with Allow", async () => {
      const res = await call(server, "PUT", "/v1/locations", { token: f.tokens.api, body: {} })
      expectRefusal(res, 405, "method_not_allowed")
      expect(res.headers.get("allow")).toBe("GET, HEAD, POST")
      const item = await call(server, "POST", "/v1/locations/00000000-0000-4000-8000-000000000001", { token: f.tokens.api, body: {} })
      expect(item.headers.get("allow")).toBe("GET, HEAD, PATCH, DELETE")
      const nowhere = await call(server, "GET", "/v1/nowhere", { token: f.tokens.api })
      expectRefusal(nowhere, 404, "not_found")
    })

    it("query parameters on an operation that defines none are refused, like unknown fields elsewhere", async () => {
      const res = await call(server, "GET", "/v1/organization?foo=1&bar=2", { token: f.tokens.api })
      expectRefusal(res, 400, "validation_failed")
      expect(res.json.error.details.map((d: { field: string }) => d.field)).toEqual(["foo", "bar"])
      expect((await call(server, "GET", "/v1/organization", { token: f.tokens.api })).status).toBe(200)
    })

    it("a body without Content-Type is 415, as one of another type is", async () => {
      const none = await call(server, "POST", "/v1/locations", {
        token: f.tokens.api,
        rawBody: '{"name":"x"}',
        headers: { "content-type": "" }
      })
      expectRefusal(none, 415, "unsupported_media_type")
      const plain = await call(server, "POST", "/v1/locations", {
        token: f.tokens.api,
        rawBody: '{"name":"x"}',
        headers: { "content-type": "text/plain" }
      })
      expect(plain.status).toBe(415)
      // A POST without a body needs no media type.
      const contact = await call(server, "POST", "/v1/contacts", { token: f.tokens.api, body: { name: "C", kind: "customer" } })
      const invoice = await call(server, "POST", "/v1/invoices", {
        token: f.tokens.api,
        body: { contact_id: contact.json.data.id, currency: "RON", lines: [{ description: "x", quantity: "1", unit_price: "1", vat_rate: 0 }] }
      })
      await call(server, "POST", `/v1/invoices/${invoice.json.data.id}/issue`, { token: f.tokens.api, body: { series: "H" } })
      const voided = await call(server, "POST", `/v1/invoices/${invoice.json.data.id}/void`, { token: f.tokens.api })
      expect(voided.status).toBe(200)
    })

    it("dates and instants at the edges of the one range are 400 outside it and work inside it, never a 500", async () => {
      const route = (route_date: string) =>
        call(server, "POST", "/v1/delivery-routes", {
          token: f.tokens.api,
          body: { name: "Edge", route_date, start_latitude: 44.4, start_longitude: 26.1 }
        })
      for (const outside of ["9999-12-31T23:00:00-05:00", "0000-01-01T00:00:00Z", "0001-01-01T00:00:00+01:00", "9999-12-31T12:00:00Z"]) {
        const res = await route(outside)
        expectRefusal(res, 400, "validation_failed")
        expect(res.json.error.details[0].field).toBe("route_date")
      }
      for (const inside of ["0001-01-02T00:00:00Z", "9999-12-30T23:59:59.999Z"]) {
        const res = await route(inside)
        expect([res.status, res.json.data.route_date]).toEqual([201, new Date(inside).toISOString()])
      }
      // A UTC organization: the last day of the range is a filter, not an instant past the range.
      const last = await call(server, "GET", "/v1/delivery-routes?date_from=0001-01-01&date_to=9999-12-31&perPage=100", { token: f.tokens.api })
      expect(last.status).toBe(200)
      expect(last.json.data.map((r: { route_date: string }) => r.route_date)).toEqual(
        expect.arrayContaining(["0001-01-02T00:00:00.000Z", "9999-12-30T23:59:59.999Z"])
      )
      const onlyLast = await call(server, "GET", "/v1/delivery-routes?date_from=9999-12-30", { token: f.tokens.api })
      expect(onlyLast.json.data.map((r: { route_date: string }) => r.route_date)).toEqual(["9999-12-30T23:59:59.999Z"])
      for (const date of ["0000-12-31", "10000-01-01", "+10000-01-01"]) {
        const res = await call(server, "GET", `/v1/delivery-routes?date_to=${date}`, { token: f.tokens.api })
        expectRefusal(res, 400, "validation_failed")
      }
    })

    it("a monthly obligation due in the last month of the range completes without a next one past it", async () => {
      const contract = await call(server, "POST", "/v1/contracts", { token: f.tokens.api, body: { name: "Edge contract" } })
      const made = await call(server, "POST", "/v1/contract-obligations", {
        token: f.tokens.api,
        body: { contract_id: contract.json.data.id, title: "Last", type: "report", due_date: "9999-12-15", recurrence: "monthly" }
      })
      expect(made.status).toBe(201)
      const done = await call(server, "POST", `/v1/contract-obligations/${made.json.data.id}/complete`, {
        token: f.tokens.api,
        body: { evidence_note: "Done" }
      })
      expect([done.status, done.json.data.status, done.json.data.next_obligation_id]).toEqual([200, "completed", null])
      const list = await call(server, "GET", `/v1/contract-obligations?contract_id=${contract.json.data.id}`, { token: f.tokens.api })
      expect(list.json.data.map((o: { due_date: string }) => o.due_date)).toEqual(["9999-12-15"])
      // One month earlier still has its successor, the last month of the range.
      const earlier = await call(server, "POST", "/v1/contract-obligations", {
        token: f.tokens.api,
        body: { contract_id: contract.json.data.id, title: "Before", type: "report", due_date: "9999-11-15", recurrence: "monthly" }
      })
      const next = await call(server, "POST", `/v1/contract-obligations/${earlier.json.data.id}/complete`, {
        token: f.tokens.api,
        body: { evidence_note: "Done" }
      })
      expect(next.json.data.next_obligation_id).toEqual(expect.any(String))
    })

    it("a body nested deeper than the limit is 400 naming the body, where the walk over it exhausted the stack", async () => {
      for (const rawBody of ["[".repeat(100_000) + "]".repeat(100_000), `{"name":${"[".repeat(65)}${"]".repeat(65)}}`]) {
        const res = await call(server, "POST", "/v1/locations", { token: f.tokens.api, rawBody })
        expectRefusal(res, 400, "validation_failed")
        expect(res.json.error.details).toEqual([{ field: "body", issue: "must not nest arrays and objects more than 64 levels deep" }])
      }
      // Brackets inside strings are text, not nesting.
      const text = await call(server, "POST", "/v1/locations", { token: f.tokens.api, body: { name: "[".repeat(200) } })
      expect(text.status).toBe(201)
    })

    it("a request line or headers too large for Node's parser is 431 in the envelope with X-Request-Id", async () => {
      const res = await call(server, "GET", `/v1/locations?${"q".repeat(20_000)}=1`, { token: f.tokens.api })
      expectRefusal(res, 431, "request_header_fields_too_large")
    })

    it("a number of three decimals at most is exactly that: what numeric(…, 3) would round is 400, not a 500 or another value", async () => {
      for (const body of [
        { plate: "B 201 HRD", fuel_type: "diesel", fuel_consumption_l_per_100km: 7.018543298670652e-12 },
        { plate: "B 202 HRD", fuel_type: "diesel", capacity_kg: 5e-323 }
      ]) {
        const res = await call(server, "POST", "/v1/fleet-vehicles", { token: f.tokens.api, body })
        expectRefusal(res, 400, "validation_failed")
      }
      const profile = await call(server, "PUT", "/v1/fleet-cost-profile", {
        token: f.tokens.api,
        body: { currency: "RON", fuel_consumption_l_per_100km: 0.1 + 0.2, fuel_price_per_litre_minor: 745, driver_cost_per_hour_minor: 4500 }
      })
      expectRefusal(profile, 400, "validation_failed")
      const exact = await call(server, "POST", "/v1/fleet-vehicles", {
        token: f.tokens.api,
        body: { plate: "B 203 HRD", fuel_type: "diesel", capacity_kg: 1.005, fuel_consumption_l_per_100km: 0.3 }
      })
      expect([exact.status, exact.json.data.capacity_kg, exact.json.data.fuel_consumption_l_per_100km]).toEqual([201, 1.005, 0.3])
      const read = await call(server, "GET", `/v1/fleet-vehicles/${exact.json.data.id}`, { token: f.tokens.api })
      expect(read.json.data).toEqual(exact.json.data)
    })
  })
}
