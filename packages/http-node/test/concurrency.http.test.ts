import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Fixture } from "@opsplatform/testing"
import { testDatabases } from "./support/databases.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"

/** How many requests race each other in every test (issue 22: twenty at once). */
const RACERS = 20

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1)

for (const db of testDatabases()) {
  describe(`writes that take a position, a number or a flag, ${RACERS} at once (${db.name})`, () => {
    let server: TestServer
    let f: Fixture

    beforeAll(async () => {
      server = await startTestServer(db.choice())
      f = await seedFixture(server)
    })
    afterAll(() => server.close())

    const race = (send: (i: number) => Promise<Awaited<ReturnType<typeof call>>>) =>
      Promise.all(Array.from({ length: RACERS }, (_, i) => send(i)))

    it("stops added to one route at once all succeed, at positions 1..n without a gap or a duplicate", async () => {
      const route = await call(server, "POST", "/v1/delivery-routes", {
        token: f.tokens.api,
        body: { name: "Race", route_date: "2026-03-02T07:00:00+02:00", start_latitude: 44.49, start_longitude: 26.17 }
      })
      expect(route.status).toBe(201)
      const answers = await race((i) =>
        call(server, "POST", `/v1/delivery-routes/${route.json.data.id}/stops`, {
          token: f.tokens.api,
          body: { label: `Stop ${i}`, latitude: 44.4 + i / 1000, longitude: 26.1 }
        })
      )
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 201))
      const after = await call(server, "GET", `/v1/delivery-routes/${route.json.data.id}`, { token: f.tokens.api })
      const stops: Array<{ position: number; label: string }> = after.json.data.stops
      expect(stops.map((s) => s.position)).toEqual(range(RACERS))
      expect(new Set(stops.map((s) => s.label)).size).toBe(RACERS)
    })

    it("routes created at once get the numbers that follow, each once", async () => {
      const answers = await race((i) =>
        call(server, "POST", "/v1/delivery-routes", {
          token: f.tokens.api,
          body: { name: `Numbered ${i}`, route_date: "2026-03-02T07:00:00+02:00", start_latitude: 44.49, start_longitude: 26.17 }
        })
      )
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 201))
      const numbers = answers.map((a) => Number(String(a.json.data.number).replace(/\D/g, ""))).sort((a, b) => a - b)
      // The earlier test made one route of this organization.
      expect(numbers).toEqual(range(RACERS).map((n) => n + 1))
    })

    it("invoices issued at once in one series are numbered 1..n, gap-free, each number once", async () => {
      const contact = await call(server, "POST", "/v1/contacts", { token: f.tokens.api, body: { name: "Racer", kind: "customer" } })
      const drafts = await Promise.all(range(RACERS).map(() =>
        call(server, "POST", "/v1/invoices", {
          token: f.tokens.api,
          body: {
            contact_id: contact.json.data.id,
            currency: "RON",
            lines: [{ description: "x", quantity: "1", unit_price: "10", vat_rate: 21 }]
          }
        })
      ))
      expect(drafts.map((d) => d.status)).toEqual(drafts.map(() => 201))
      const answers = await race((i) =>
        call(server, "POST", `/v1/invoices/${drafts[i]!.json.data.id}/issue`, { token: f.tokens.api, body: { series: "RACE" } })
      )
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200))
      const numbers: Array<string> = answers.map((a) => a.json.data.number)
      const ordinals = numbers.map((n) => Number(n.replace(/\D/g, ""))).sort((a, b) => a - b)
      expect(ordinals).toEqual(range(RACERS))
      expect(new Set(numbers).size).toBe(RACERS)
    })

    it("locations made primary at once all succeed and leave exactly one primary", async () => {
      const fresh = await seedFixture(server, "Primary race")
      const answers = await race((i) =>
        call(server, "POST", "/v1/locations", { token: fresh.tokens.api, body: { name: `Site ${i}`, is_primary: true } })
      )
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 201))
      const primaries = await call(server, "GET", "/v1/locations?is_primary=true", { token: fresh.tokens.api })
      expect(primaries.json.meta.total).toBe(1)

      const sites = await call(server, "GET", "/v1/locations?perPage=100", { token: fresh.tokens.api })
      const updates = await race((i) =>
        call(server, "PATCH", `/v1/locations/${sites.json.data[i].id}`, { token: fresh.tokens.api, body: { is_primary: true } })
      )
      expect(updates.map((a) => a.status)).toEqual(updates.map(() => 200))
      const after = await call(server, "GET", "/v1/locations?is_primary=true", { token: fresh.tokens.api })
      expect(after.json.meta.total).toBe(1)
    })
  })
}
