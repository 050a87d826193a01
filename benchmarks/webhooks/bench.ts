/**
 * Webhook delivery on PostgreSQL: deliveries per second to a loopback
 * receiver with 1, 2 and 4 worker processes (`opsplatform worker`, the
 * production command), and event-to-first-attempt latency (commit of the
 * publishing transaction to arrival at the receiver). The baseline, in the
 * same run, is a plain keep-alive node:http client POSTing the same kind of
 * signed body to the same receiver with no database: the ratio says how much
 * of what the machine allows the workers deliver.
 *
 *   npm run build && DATABASE_URL=postgres://... npx tsx --conditions source benchmarks/webhooks/bench.ts
 *
 * BENCH_EVENTS (default 5000) events per throughput run; BENCH_LATENCY_EVENTS
 * (default 1000) published one per transaction every BENCH_LATENCY_GAP_MS
 * (default 5) for the latency run.
 */
import { type ChildProcess, fork, spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Exit, Layer, References, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { Events, Ids, Outbox, Transactor, Webhooks } from "@opsplatform/core"
import { makeFixture } from "@opsplatform/testing"
import { coreLive } from "../../packages/http-node/src/server/app.ts"

const here = path.dirname(fileURLToPath(import.meta.url))
const bin = path.resolve(here, "../../packages/http-node/bin/opsplatform.js")
const url = process.env.DATABASE_URL
if (!url) throw new Error("Set DATABASE_URL to a PostgreSQL database: the benchmark measures workers sharing one")
const events = Number(process.env.BENCH_EVENTS ?? 5000)
const latencyEvents = Number(process.env.BENCH_LATENCY_EVENTS ?? 1000)
const latencyGapMs = Number(process.env.BENCH_LATENCY_GAP_MS ?? 5)
// A key for this run only; the worker processes get the same one.
process.env.OPSPLATFORM_SECRET_KEY ??= "6f707370-6c61-7466-6f72-6d2d62656e63".replace(/-/g, "").padEnd(64, "0")
process.env.OPSPLATFORM_WEBHOOKS_ALLOW_PRIVATE = "true"

const scope = Effect.runSync(Scope.make())
const context = await Effect.runPromise(
  Layer.buildWithScope(
    coreLive({ _tag: "Postgres", url, maxConnections: 4 }).pipe(
      Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn"))
    ),
    scope
  )
)
const run = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.runPromise(Effect.provideContext(effect, context as any))

// The receiver in its own process.
const receiver = fork(path.join(here, "receiver.mjs"), [], { stdio: ["ignore", "inherit", "inherit", "ipc"] })
const receiverPort = await new Promise<number>((resolve) => receiver.once("message", (m: any) => resolve(m.port)))
const arrivals = (expect: number) =>
  new Promise<{ total: number; first: Record<string, number> }>((resolve) => {
    receiver.once("message", (m: any) => resolve(m))
    receiver.send({ expect })
  })

const fixture = await run(makeFixture("Webhook benchmark"))
const subscription = await run(Effect.flatMap(Webhooks.Webhooks, (w) =>
  w.create(fixture.sandbox, { url: `http://127.0.0.1:${receiverPort}/hooks`, event_types: ["fleet_vehicle.created"] })))

/** Publishes `n` events in one transaction (or one per transaction, `gapMs` apart); returns commit times by event id. */
const publish = (n: number, options: { readonly perTransaction?: boolean; readonly gapMs?: number } = {}) =>
  run(Effect.gen(function*() {
    const outbox = yield* Outbox.Outbox
    const tx = yield* Transactor.Transactor
    const ids = yield* Ids.Ids
    const one = Effect.gen(function*() {
      const eventId = Events.freshEventId(yield* ids.uuid)
      yield* outbox.publish(fixture.sandbox, Events.event("fleet_vehicle.created", eventId, { id: eventId, plate: "B-101-OPS" }))
      return eventId
    })
    const committed: Record<string, number> = {}
    if (options.perTransaction) {
      for (let i = 0; i < n; i++) {
        const id = yield* tx.withTransaction(one)
        committed[id] = Date.now()
        if (options.gapMs) yield* Effect.sleep(`${options.gapMs} millis`)
      }
    } else {
      const list = yield* tx.withTransaction(Effect.forEach(Array.from({ length: n }), () => one))
      const at = Date.now()
      for (const id of list) committed[id] = at
    }
    return committed
  }))

const workerEnv = {
  ...process.env,
  DATABASE_URL: url,
  OPSPLATFORM_LOG_LEVEL: "Warn"
}

const startWorker = (): Promise<ChildProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, "worker"], {
      env: {
        ...workerEnv,
        OPSPLATFORM_LOG_LEVEL: "Info",
        // e.g. BENCH_WORKER_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the workers
        ...(process.env.BENCH_WORKER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_WORKER_NODE_OPTIONS } : {})
      },
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr!.on("data", (d) => {
      stderr += d
      if (stderr.includes("webhook worker started")) resolve(child)
    })
    child.on("close", (code) => reject(new Error(`worker exited with ${code}: ${stderr}`)))
  })

const stopWorkers = (workers: ReadonlyArray<ChildProcess>) =>
  Promise.all(workers.map((w) => new Promise<void>((resolve) => {
    w.removeAllListeners("close")
    w.once("close", () => resolve())
    w.kill("SIGTERM")
  })))

const succeededCount = () =>
  run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`SELECT count(*)::int AS n FROM webhook_deliveries
      WHERE subscription_id = ${subscription.id} AND status = 'succeeded'`
    return (rows[0] as any).n as number
  }))

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!

let delivered = 0
const throughput = async (workerCount: number) => {
  const workers = await Promise.all(Array.from({ length: workerCount }, startWorker))
  const arrived = arrivals(events)
  const committed = await publish(events)
  const t0 = Math.min(...Object.values(committed))
  const got = await arrived
  const last = Math.max(...Object.values(got.first))
  delivered += events
  while ((await succeededCount()) < delivered) await new Promise((r) => setTimeout(r, 20))
  const recorded = Date.now()
  await stopWorkers(workers)
  return {
    workers: workerCount,
    events,
    deliveriesPerSecond: Math.round(events / ((last - t0) / 1000)),
    recordedPerSecond: Math.round(events / ((recorded - t0) / 1000)),
    duplicates: got.total - events
  }
}

const latency = async () => {
  const workers = [await startWorker()]
  const arrived = arrivals(latencyEvents)
  const committed = await publish(latencyEvents, { perTransaction: true, gapMs: latencyGapMs })
  const got = await arrived
  delivered += latencyEvents
  await stopWorkers(workers)
  const latencies = Object.entries(committed).map(([id, at]) => got.first[id]! - at).sort((a, b) => a - b)
  return {
    events: latencyEvents,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    maxMs: latencies[latencies.length - 1]
  }
}

const baseline = () =>
  new Promise<{ deliveriesPerSecond: number }>((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(here, "baseline.mjs"), `http://127.0.0.1:${receiverPort}/hooks`, String(events), "64"], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout.on("data", (d) => (out += d))
    child.on("error", reject)
    child.on("close", () => resolve(JSON.parse(out)))
  })

const counts = (process.env.BENCH_WORKERS ?? "1,2,4").split(",").map(Number)
await throughput(1) // warm-up: connections, prepared statements, JIT
const runs = []
for (const n of counts) runs.push(await throughput(n))
const lat = await latency()
const base = await baseline()

console.log(JSON.stringify({ baseline: base, runs, latency: lat }, null, 2))
console.log("\n| workers | deliveries/s | recorded/s | ratio to baseline |\n|---|---|---|---|")
for (const r of runs) {
  console.log(`| ${r.workers} | ${r.deliveriesPerSecond} | ${r.recordedPerSecond} | ${(r.deliveriesPerSecond / base.deliveriesPerSecond).toFixed(2)} |`)
}
console.log(`| baseline (plain node:http client, no database) | ${base.deliveriesPerSecond} | | 1.00 |`)
console.log(`\nevent → first attempt (1 worker, ${lat.events} events, one per transaction): p50 ${lat.p50Ms} ms, p99 ${lat.p99Ms} ms`)

receiver.send("stop")
await Effect.runPromise(Scope.close(scope, Exit.void))
