import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Pagination } from "@opsplatform/core"
import type { Fixture } from "@opsplatform/testing"
import { testDatabases } from "./support/databases.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"

/** `n` locations in the fixture's live environment, one a minute back from 2026-01-01, written in one statement. */
const seedLocations = (server: TestServer, f: Fixture, n: number, prefix: string) =>
  server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO locations (id, organization_id, environment, name, vertical_type, created_at, updated_at)
      SELECT gen_random_uuid(), ${f.organizationId}, 'live', ${prefix} || g, 'retail',
        timestamptz '2026-01-01' - g * interval '1 minute', timestamptz '2026-01-01'
      FROM generate_series(1, ${n}::int) AS g`
  }))

for (const db of testDatabases()) {
  describe(`what meta.total costs (${db.name})`, () => {
    let server: TestServer
    let small: Fixture
    let large: Fixture
    beforeAll(async () => {
      server = await startTestServer(db.choice())
      small = await seedFixture(server, "Small list")
      large = await seedFixture(server, "Large list")
      await seedLocations(server, small, 30, "Site ")
      await seedLocations(server, large, Pagination.EXACT_TOTAL_LIMIT + 500, "Depot ")
    }, 120_000)
    afterAll(() => server.close())

    it("counts a list exactly up to the limit, and a cursor walk counts once: later pages carry the first page's total", async () => {
      const first = await call(server, "GET", "/v1/locations?perPage=10", { token: small.tokens.api })
      expect(first.json.meta).toMatchObject({ page: 1, perPage: 10, total: 30, totalPages: 3 })
      expect(first.json.meta.totalEstimated).toBeUndefined()
      // A row added mid-walk: the walk keeps the total it started with, and the next fresh list counts it.
      await seedLocations(server, small, 1, "Late ")
      const second = await call(server, "GET", `/v1/locations?perPage=10&cursor=${first.json.meta.nextCursor}`, {
        token: small.tokens.api
      })
      expect(second.json.meta).toMatchObject({ page: 2, total: 30, totalPages: 3 })
      const fresh = await call(server, "GET", "/v1/locations?perPage=10", { token: small.tokens.api })
      expect(fresh.json.meta.total).toBe(31)
      // Offset pages count afresh every time.
      const third = await call(server, "GET", "/v1/locations?perPage=10&page=3", { token: small.tokens.api })
      expect(third.json.meta).toMatchObject({ page: 3, total: 31, totalPages: 4 })
    })

    it("above the limit reports the planner's estimate, flagged, and pages read the same rows either way", async () => {
      const first = await call(server, "GET", "/v1/locations?perPage=100", { token: large.tokens.api })
      expect(first.status).toBe(200)
      expect(first.json.meta.totalEstimated).toBe(true)
      expect(first.json.meta.total).toBeGreaterThan(Pagination.EXACT_TOTAL_LIMIT)
      expect(first.json.meta.totalPages).toBe(Math.ceil(first.json.meta.total / 100))
      // The estimate comes from table statistics: within a factor of two of the 10 500 rows even before ANALYZE.
      expect(first.json.meta.total).toBeLessThan(2 * (Pagination.EXACT_TOTAL_LIMIT + 500) + 1)
      const second = await call(server, "GET", `/v1/locations?perPage=100&cursor=${first.json.meta.nextCursor}`, {
        token: large.tokens.api
      })
      expect(second.json.meta).toMatchObject({ page: 2, total: first.json.meta.total, totalEstimated: true })
      const byOffset = await call(server, "GET", "/v1/locations?perPage=100&page=2", { token: large.tokens.api })
      expect(byOffset.json.data.map((l: any) => l.id)).toEqual(second.json.data.map((l: any) => l.id))
      // Deep offset pages (over the ids first) return the rows in order: names run Depot 10001..10100.
      const deep = await call(server, "GET", "/v1/locations?perPage=100&page=101", { token: large.tokens.api })
      expect(deep.json.data.map((l: any) => l.name)).toEqual(
        Array.from({ length: 100 }, (_, i) => `Depot ${10_001 + i}`)
      )
      // The small tenant beside it is still counted exactly.
      const other = await call(server, "GET", "/v1/locations", { token: small.tokens.api })
      expect(other.json.meta.totalEstimated).toBeUndefined()
    })
  })
}
