/**
 * What metrics and tracing cost: authenticated `GET /v1/locations` on two real
 * servers in the same run, one with nothing configured and one with
 * `OPSPLATFORM_METRICS_PORT` set and `OTEL_EXPORTER_OTLP_ENDPOINT` pointing at
 * a collector on loopback (which takes every export), each over its own
 * database with the same rows; rounds alternate so machine load falls on
 * both. Target: on/off throughput ≥ 0.95. Prints a JSON summary.
 *
 *   npx tsx --conditions source benchmarks/api/observability.ts
 *   (DATABASE_URL is ignored: each server has an in-memory PGlite of its own)
 */
import { Effect } from "effect"
import { createServer } from "node:http"
import { Locations } from "@opsplatform/core"
import { makeFixture } from "@opsplatform/testing"
import { loadTest, summary } from "../support/autocannon.ts"
import { startBenchServer } from "../support/server.ts"

const duration = Number(process.env.BENCH_SECONDS ?? 10)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
delete process.env.DATABASE_URL

let exported = 0
const collector = createServer((req, res) => {
  req.on("data", () => undefined)
  req.on("end", () => {
    exported++
    res.writeHead(200, { "content-type": "application/json" }).end("{}")
  })
})
await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve))
const collectorUrl = `http://127.0.0.1:${(collector.address() as { port: number }).port}`

const start = async (env: Record<string, string>) => {
  const server = await startBenchServer(env)
  const fixture = await server.run(makeFixture("Benchmark"))
  await server.run(Effect.gen(function*() {
    const locations = yield* Locations.Locations
    for (let i = 0; i < 40; i++) yield* locations.create(fixture.live, { name: `Site ${i}`, vertical_type: "retail" })
  }))
  const load = () =>
    loadTest({
      url: `http://127.0.0.1:${server.port}/v1/locations`,
      connections,
      seconds: duration,
      headers: { authorization: `Bearer ${fixture.tokens.api}` }
    })
  return { server, load }
}

const off = await start({})
const on = await start({ OPSPLATFORM_METRICS_PORT: "0", OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl })

await off.load() // warm-up
await on.load()
const results = { off: [] as Array<number>, on: [] as Array<number> }
let last: { off?: ReturnType<typeof summary>; on?: ReturnType<typeof summary> } = {}
for (let i = 0; i < rounds; i++) {
  const a = await off.load()
  const b = await on.load()
  results.off.push(a.requests.average)
  results.on.push(b.requests.average)
  last = { off: summary(a), on: summary(b) }
}
const total = (xs: ReadonlyArray<number>) => xs.reduce((n, x) => n + x, 0)
console.log(JSON.stringify({
  connections,
  durationSeconds: duration,
  rounds,
  requestsPerSecond: results,
  lastRound: last,
  exportsReceived: exported,
  ratio: Math.round((total(results.on) / total(results.off)) * 100) / 100
}, null, 2))
await on.server.close()
await off.server.close()
collector.close()
process.exit(0)
