/**
 * Authenticated `GET /v1/locations` throughput: the real server (Effect HttpApi,
 * middleware, auth, envelope) against a raw `node:http` server doing the same
 * work (token hash lookup, count, page query, envelope JSON) on the same
 * database, in the same run. Prints a JSON summary and the ratio.
 *
 *   DATABASE_URL=postgres://... npx tsx --conditions source benchmarks/api/bench.ts
 *   (without DATABASE_URL it uses an in-memory PGlite)
 */
import { Context, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import { createServer } from "node:http"
import { Locations, Pagination } from "@opsplatform/core"
import { makeFixture } from "@opsplatform/testing"
import { loadTest, summary } from "../support/autocannon.ts"
import { startBenchServer } from "../support/server.ts"

const duration = Number(process.env.BENCH_SECONDS ?? 10)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32)
const { close, context, database, port: apiPort, run } = await startBenchServer()

const fixture = await run(makeFixture("Benchmark"))
await run(Effect.gen(function*() {
  const locations = yield* Locations.Locations
  for (let i = 0; i < 40; i++) yield* locations.create(fixture.live, { name: `Site ${i}`, vertical_type: "retail" })
}))

// The baseline: node:http + the same SQL client, the same three queries, the same envelope.
const sql = Context.get(context, SqlClient.SqlClient)
const raw = createServer((req, res) => {
  const token = (req.headers.authorization ?? "").slice(7)
  const hash = createHash("sha256").update(token).digest("hex")
  Effect.runPromise(Effect.gen(function*() {
    const creds = yield* sql`SELECT organization_id, environment, scopes, revoked_at FROM credentials WHERE token_hash = ${hash}`
    const c = creds[0] as any
    if (!c || c.revoked_at !== null || !String(c.scopes).split(" ").includes("locations:read")) return undefined
    const [count, rows] = yield* Effect.all([
      sql`SELECT count(*)::int AS n FROM locations WHERE organization_id = ${c.organization_id} AND environment = ${c.environment}`,
      sql`SELECT * FROM locations WHERE organization_id = ${c.organization_id} AND environment = ${c.environment}
        ORDER BY created_at DESC, id DESC LIMIT 26 OFFSET 0`
    ], { concurrency: 1 })
    return { total: (count[0] as any).n as number, rows }
  })).then((result) => {
    if (result === undefined) {
      res.writeHead(401).end()
      return
    }
    const data = result.rows.slice(0, 25).map((r: any) => ({
      id: r.id, name: r.name, code: r.code, vertical_type: r.vertical_type, is_primary: r.is_primary, address: r.address,
      latitude: r.latitude, longitude: r.longitude, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString()
    }))
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
      data,
      error: null,
      meta: {
        page: 1,
        perPage: 25,
        total: result.total,
        totalPages: Math.ceil(result.total / 25),
        nextCursor: result.rows.length > 25
          ? Pagination.encodeCursor({ createdAt: data[24]!.created_at, id: data[24]!.id }, 2)
          : null
      }
    }))
  }, () => res.writeHead(500).end())
})
await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve))
const rawPort = (raw.address() as { port: number }).port

const load = (port: number) =>
  loadTest({
    url: `http://127.0.0.1:${port}/v1/locations`,
    connections,
    seconds: duration,
    headers: { authorization: `Bearer ${fixture.tokens.api}` }
  })

// Sanity: both answer the same page.
const a = await (await fetch(`http://127.0.0.1:${apiPort}/v1/locations`, { headers: { authorization: `Bearer ${fixture.tokens.api}` } })).json()
const b = await (await fetch(`http://127.0.0.1:${rawPort}/v1/locations`, { headers: { authorization: `Bearer ${fixture.tokens.api}` } })).json()
if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error("the two servers disagree")

await load(apiPort) // warm-up
await load(rawPort)
const api = await load(apiPort)
const baseline = await load(rawPort)
console.log(JSON.stringify({
  database: database._tag,
  connections,
  durationSeconds: duration,
  api: summary(api),
  rawNodeHttp: summary(baseline),
  ratio: Math.round((api.requests.average / baseline.requests.average) * 100) / 100
}, null, 2))
raw.close()
await close()
process.exit(0)
