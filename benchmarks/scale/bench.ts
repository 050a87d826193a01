/**
 * Many processes, one PostgreSQL: 1, 2 and 4 `opsplatform serve` processes
 * with 2 `opsplatform worker` processes (the production commands, built), a
 * mixed load from its own process (`load.ts`: reads, writes that publish
 * events, cost comparisons) spread over the servers, and a webhook receiver
 * that verifies every delivery with the `standardwebhooks` library.
 *
 *   npm run build && DATABASE_URL=postgres://postgres@127.0.0.1:5432/perf npx tsx --conditions source benchmarks/scale/bench.ts
 *
 * For each round it reports requests per second, p50/p99, the responses by
 * status class (the target: no 5xx), the events acknowledged by a 201 and
 * those received (the target: none lost, none twice), and the most
 * connections the processes held at once against `max_connections`.
 * `BENCH_SECONDS` (60), `BENCH_CONNECTIONS` (32), `BENCH_SERVERS` ("1,2,4").
 */
import { Context, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { spawn, type ChildProcess } from "node:child_process"
import { createServer } from "node:http"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import { Webhook } from "standardwebhooks"
import { makeFixture } from "@opsplatform/testing"
import { openBenchCore } from "../support/core.ts"
import { callApi } from "../support/server.ts"

const seconds = Number(process.env.BENCH_SECONDS ?? 60)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32)
const rounds = (process.env.BENCH_SERVERS ?? "1,2,4").split(",").map(Number)
const url = process.env.DATABASE_URL
if (url === undefined) throw new Error("Set DATABASE_URL: this benchmark runs processes on one PostgreSQL")
const bin = fileURLToPath(new URL("../../packages/http-node/bin/opsplatform.js", import.meta.url))
const require = createRequire(import.meta.url)
const tsx = require.resolve("tsx/cli")
const env = {
  ...process.env,
  DATABASE_URL: url,
  DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE ?? "10",
  OPSPLATFORM_SECRET_KEY: process.env.OPSPLATFORM_SECRET_KEY ?? "0".repeat(64),
  OPSPLATFORM_WEBHOOKS_ALLOW_PRIVATE: "true",
  OPSPLATFORM_LOG_LEVEL: "Warn",
  // Cost comparisons are a fifth of the load: the heavy tier (30 a minute per organization by default) is raised so they run.
  OPSPLATFORM_HEAVY_RATE_PER_MIN: "1000000"
}

const core = await openBenchCore()
const fixture = await core.run(makeFixture("Scale benchmark"))
// The sandbox: its webhooks may point at plain http on loopback, where the receiver listens.
const token = fixture.tokens.sandbox

// The receiver: every delivery verified, counted by message id and by vehicle.
let verify: Webhook | undefined
const byMessage = new Map<string, number>()
const byVehicle = new Map<string, number>()
let rejected = 0
const receiver = createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (c) => chunks.push(c))
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8")
    try {
      const event = verify!.verify(body, req.headers as Record<string, string>) as any
      const id = String(req.headers["webhook-id"])
      byMessage.set(id, (byMessage.get(id) ?? 0) + 1)
      if (event.type === "fleet_vehicle.created") byVehicle.set(event.data.id, (byVehicle.get(event.data.id) ?? 0) + 1)
      res.writeHead(204).end()
    } catch {
      rejected++
      res.writeHead(400).end()
    }
  })
})
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
const receiverPort = (receiver.address() as { port: number }).port

const children: Array<ChildProcess> = []
const start = (args: ReadonlyArray<string>) => {
  const child = spawn(process.execPath, [bin, ...args], { env, stdio: ["ignore", "ignore", "inherit"] })
  children.push(child)
  return child
}
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL")
})
const stopAll = async () => {
  const exits = children.map((c) => new Promise((resolve) => c.exitCode !== null ? resolve(null) : c.once("exit", resolve)))
  for (const c of children) c.kill("SIGTERM")
  await Promise.all(exits)
  children.length = 0
}
const ready = async (port: number) => {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200) return
    } catch {}
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`the server on ${port} never became ready`)
}
const api = (port: number, method: string, path: string, body?: unknown) => callApi(port, token, method, path, body)

const sql = await core.run(Effect.map(Effect.context<SqlClient.SqlClient>(), (c) => Context.get(c, SqlClient.SqlClient)))
const [{ max }] = await core.run(sql<{ max: string }>`SELECT setting AS max FROM pg_settings WHERE name = 'max_connections'`) as any
const heldConnections = async () =>
  Number(((await core.run(sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'opsplatform'`)) as any)[0].n)

let routeId = ""
const results = []
for (const [round, servers] of rounds.entries()) {
  const ports = Array.from({ length: servers }, (_, i) => 18_400 + round * 10 + i)
  for (const port of ports) start(["serve", "--port", String(port), "--host", "127.0.0.1"])
  for (let i = 0; i < 2; i++) start(["worker"])
  await Promise.all(ports.map(ready))
  if (verify === undefined) {
    const hook = await api(ports[0]!, "POST", "/v1/webhooks", {
      url: `http://127.0.0.1:${receiverPort}/hook`,
      event_types: ["fleet_vehicle.created"]
    })
    verify = new Webhook(hook.secret!)
    await api(ports[0]!, "PUT", "/v1/fleet-cost-profile", {
      currency: "RON", fuel_consumption_l_per_100km: 9.5, fuel_price_per_litre_minor: 745, driver_cost_per_hour_minor: 4500
    })
    await api(ports[0]!, "PUT", "/v1/courier-rate-card", {
      currency: "RON", couriers: [{ name: "Courier", bands: [{ up_to_km: 10, per_parcel_minor: 1000, per_kg_minor: 50 }, { up_to_km: 50, per_parcel_minor: 1800, per_kg_minor: 80 }] }]
    })
    const route = await api(ports[0]!, "POST", "/v1/delivery-routes", {
      name: "Scale route",
      route_date: "2026-03-02T07:00:00+02:00",
      start_latitude: 44.49,
      start_longitude: 26.17,
      stops: Array.from({ length: 30 }, (_, i) => ({ label: `Stop ${i}`, latitude: 44.3 + i * 0.01, longitude: 26.0 + (i % 7) * 0.02 }))
    })
    routeId = route.id
  }
  byMessage.clear()
  byVehicle.clear()
  let peak = await heldConnections()
  const sampler = setInterval(() => void heldConnections().then((n) => (peak = Math.max(peak, n))), 500)
  const load = await new Promise<any>((resolve, reject) => {
    const child = spawn(process.execPath, [tsx, fileURLToPath(new URL("./load.ts", import.meta.url))], {
      env: {
        ...process.env,
        PORTS: ports.join(","),
        TOKEN: token,
        ROUTE_ID: routeId,
        SECONDS: String(seconds),
        CONNECTIONS: String(connections),
        PLATE_PREFIX: ["CD", "TC", "CO"][round % 3]! + (round >= 3 ? "9" : "")
      },
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout.on("data", (d) => (out += d))
    child.on("error", reject)
    child.on("close", () => resolve(JSON.parse(out)))
  })
  // Every acknowledged creation must arrive: wait for the workers to drain.
  const acknowledged: ReadonlyArray<string> = load.acknowledged
  const deadline = Date.now() + 180_000
  while (Date.now() < deadline && acknowledged.some((id) => !byVehicle.has(id))) await new Promise((r) => setTimeout(r, 250))
  clearInterval(sampler)
  const lost = acknowledged.filter((id) => !byVehicle.has(id)).length
  const duplicateMessages = [...byMessage.values()].filter((n) => n > 1).length
  const duplicateVehicles = [...byVehicle.values()].filter((n) => n > 1).length
  const fivexx = Object.values(load.counts as Record<string, Record<string, number>>).reduce((s, c) => s + (c["5xx"] ?? 0), 0)
  const row = {
    servers,
    workers: 2,
    requestsPerSecond: load.perSecond,
    p50Ms: load.p50,
    p99Ms: load.p99,
    responses: load.counts,
    fivexx,
    eventsAcknowledged: acknowledged.length,
    eventsReceived: byVehicle.size,
    lost,
    duplicateMessages,
    duplicateVehicles,
    rejectedSignatures: rejected,
    peakConnections: peak,
    maxConnections: Number(max)
  }
  results.push(row)
  process.stderr.write(`${JSON.stringify(row)}\n`)
  await stopAll()
}
console.log(JSON.stringify({ seconds, connections, results }, null, 2))
receiver.close()
await core.close()
process.exit(0)
