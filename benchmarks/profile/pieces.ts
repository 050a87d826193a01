/**
 * What one authenticated list of 50 delivery routes costs in CPU, piece by
 * piece, in this process (no network): decoding the rows the driver returns
 * through the row schema, encoding the envelope through the endpoint's
 * response schema, serialising it, and one request's log line — against the
 * baseline of `JSON.stringify` of the raw rows. Rows come from the seeded
 * database (`benchmarks/seed/seed.ts`).
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/perf npx tsx --conditions source benchmarks/profile/pieces.ts
 */
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { readFileSync } from "node:fs"
import { RouteModel, RouteRepo } from "@opsplatform/core"
import { ListEnvelope } from "../../packages/http-node/src/api/envelope.ts"
import { openBenchCore } from "../support/core.ts"

const state = JSON.parse(readFileSync(new URL("../seed/state.json", import.meta.url), "utf8"))
const org = state.organizations[0].organizationId
const core = await openBenchCore()
const rows = await core.run(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* sql`SELECT *, (SELECT count(*)::int FROM delivery_route_stops s WHERE s.route_id = delivery_routes.id) AS stop_count
    FROM delivery_routes WHERE organization_id = ${org} AND environment = 'live' ORDER BY created_at DESC, id DESC LIMIT 50`
}))
await core.close()

const decodeRows = Schema.decodeUnknownSync(Schema.Array(RouteRepo.DeliveryRouteRow))
const routes = decodeRows(rows)
const envelope = ListEnvelope(RouteModel.DeliveryRoute)
const encodeEnvelope = Schema.encodeSync(envelope)
const meta = { page: 1, perPage: 50, total: 999_201, totalPages: 19_985, nextCursor: "x".repeat(120), totalEstimated: true as const }
const value = { data: routes, error: null, meta }

const time = (name: string, f: () => unknown, iterations = 2_000) => {
  for (let i = 0; i < 200; i++) f()
  const started = performance.now()
  for (let i = 0; i < iterations; i++) f()
  const us = ((performance.now() - started) * 1000) / iterations
  return { name, microsecondsPerRequest: Math.round(us) }
}
const results = [
  time("baseline: JSON.stringify of the 50 raw rows", () => JSON.stringify(rows)),
  time("decode 50 rows through the row schema", () => decodeRows(rows)),
  time("encode the envelope through the response schema", () => encodeEnvelope(value)),
  time("JSON.stringify of the encoded envelope", () => JSON.stringify(encodeEnvelope(value))),
  time("one JSON log line", () => JSON.stringify({ level: "INFO", message: "request", requestId: "req_0123456789abcdef01234567", method: "GET", path: "/v1/delivery-routes", status: 200, durationMs: 12.5, credentialId: org }))
]
console.log(JSON.stringify(results, null, 2))
process.exit(0)
