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
 *
 * BENCH_MODE=schemes compares the signing schemes instead: one worker sends
 * to a `v1` (HMAC) and a `v1a` (Ed25519) subscription of the same receiver in
 * alternating rounds (v1, v1a, then v1a, v1, …) of BENCH_SCHEME_EVENTS
 * (default 2000) events, BENCH_SCHEME_ROUNDS (default 8) rounds each; the
 * ratio is v1a's deliveries per second over v1's, per pair of rounds, and
 * the median of the pairs.
 */
import { type ChildProcess, fork, spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Exit, Layer, References, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { Events, Ids, Outbox, Transactor, Webhooks } from "@opsplatform/core"
import { makeFixture } from "@opsplatform/testing"
import { coreLive } from "../../packages/http-node/src/server/app.ts"
import { median } from "../support/rounds.ts"

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
  new Promise<{ total: number; first: Record<string, number>; schemes: Record<string, number> }>((resolve) => {
    receiver.once("message", (m: any) => resolve(m))
    receiver.send({ expect })
  })

const fixture = await run(makeFixture("Webhook benchmark"))
const subscription = await run(Effect.flatMap(Webhooks.Webhooks, (w) =>
  w.create(fixture.sandbox, { url: `http://127.0.0.1:${receiverPort}/hooks`, event_types: ["fleet_vehicle.created"] })))

type EventType = "fleet_vehicle.created" | "fleet_vehicle.deleted"

/** Publishes `n` events in one transaction (or one per transaction, `gapMs` apart); returns commit times by event id. */
const publish = (
  n: number,
  options: { readonly perTransaction?: boolean; readonly gapMs?: number; readonly type?: EventType } = {}
) =>
  run(Effect.gen(function*() {
    const outbox = yield* Outbox.Outbox
    const tx = yield* Transactor.Transactor
    const ids = yield* Ids.Ids
    const one = Effect.gen(function*() {
      const eventId = Events.freshEventId(yield* ids.uuid)
      yield* outbox.publish(fixture.sandbox, Events.event(options.type ?? "fleet_vehicle.created", eventId, { id: eventId, plate: "B-101-OPS" }))
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

/** Deliveries recorded as succeeded, to the benchmark's subscriptions. */
const succeededCount = () =>
  run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`SELECT count(*)::int AS n FROM webhook_deliveries d
      JOIN webhook_subscriptions s ON s.id = d.subscription_id
      WHERE s.organization_id = ${fixture.organizationId} AND d.status = 'succeeded'`
    return (rows[0] as any).n as number
  }))

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!

let delivered = 0

/** `n` events published in one transaction to the running workers: from its commit to the last first arrival, and to the last record. */
const timedRun = async (n: number, type: EventType = "fleet_vehicle.created") => {
  const arrived = arrivals(n)
  const committed = await publish(n, { type })
  const t0 = Math.min(...Object.values(committed))
  const got = await arrived
  const last = Math.max(...Object.values(got.first))
  delivered += n
  while ((await succeededCount()) < delivered) await new Promise((r) => setTimeout(r, 20))
  const recorded = Date.now()
  return {
    deliveriesPerSecond: Math.round(n / ((last - t0) / 1000)),
    recordedPerSecond: Math.round(n / ((recorded - t0) / 1000)),
    duplicates: got.total - n,
    /** How many deliveries carried each list of entry versions, e.g. { "v1a": 2000 }. */
    schemes: got.schemes
  }
}

const throughput = async (workerCount: number) => {
  const workers = await Promise.all(Array.from({ length: workerCount }, startWorker))
  const result = await timedRun(events)
  await stopWorkers(workers)
  return { workers: workerCount, events, deliveriesPerSecond: result.deliveriesPerSecond, recordedPerSecond: result.recordedPerSecond, duplicates: result.duplicates }
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

/** v1 against v1a, one worker, alternating rounds: see BENCH_MODE=schemes above. */
const schemes = async () => {
  const perRound = Number(process.env.BENCH_SCHEME_EVENTS ?? 2000)
  const rounds = Number(process.env.BENCH_SCHEME_ROUNDS ?? 8)
  await run(Effect.flatMap(Webhooks.Webhooks, (w) =>
    w.create(fixture.sandbox, {
      url: `http://127.0.0.1:${receiverPort}/hooks`,
      event_types: ["fleet_vehicle.deleted"],
      signing_scheme: "v1a"
    })))
  const typeOf = { v1: "fleet_vehicle.created", v1a: "fleet_vehicle.deleted" } as const
  const workers = [await startWorker()]
  // Warm-up: connections, prepared statements, JIT, both schemes' keys opened.
  await timedRun(perRound, typeOf.v1)
  await timedRun(perRound, typeOf.v1a)
  const rates = { v1: [] as Array<number>, v1a: [] as Array<number> }
  for (let i = 0; i < rounds; i++) {
    for (const scheme of i % 2 === 0 ? ["v1", "v1a"] as const : ["v1a", "v1"] as const) {
      const r = await timedRun(perRound, typeOf[scheme])
      if (r.duplicates !== 0) throw new Error(`${r.duplicates} duplicate deliveries in a ${scheme} round`)
      if (JSON.stringify(r.schemes) !== JSON.stringify({ [scheme]: perRound })) {
        throw new Error(`a ${scheme} round's deliveries were signed ${JSON.stringify(r.schemes)}`)
      }
      rates[scheme].push(r.deliveriesPerSecond)
    }
  }
  await stopWorkers(workers)
  const ratios = rates.v1a.map((v, i) => v / rates.v1[i]!)
  console.log(JSON.stringify({ perRound, rounds, rates, ratios: ratios.map((r) => Number(r.toFixed(3))) }))
  console.log("\n| scheme | deliveries/s (median of rounds) | rounds |\n|---|---|---|")
  console.log(`| v1 (HMAC-SHA256) | ${median(rates.v1)} | ${rates.v1.join(", ")} |`)
  console.log(`| v1a (Ed25519) | ${median(rates.v1a)} | ${rates.v1a.join(", ")} |`)
  console.log(`\nv1a / v1: median ${median(ratios).toFixed(2)} (pairs ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}), target ≥ 0.8`)
}

if (process.env.BENCH_MODE === "schemes") {
  await schemes()
} else {
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
}

receiver.send("stop")
await Effect.runPromise(Scope.close(scope, Exit.void))
