/**
 * Usage metering on one database, two measurements in one run.
 *
 * 1. Accepted usage reports per second: authenticated `POST
 *    /v1/subscriptions/{id}/usage` through the full server (HttpApi,
 *    middleware, bearer authentication and scope, the subscription lookup, the
 *    statement that writes the record, its forwarding job and its stream —
 *    concurrent reports share one, as the server does by default) against a
 *    raw `node:http` server that parses the same JSON body and runs one
 *    `INSERT … ON CONFLICT DO NOTHING` per request into a table with the same
 *    unique key, through the same SQL client: no authentication, no
 *    subscription, no outbox. BENCH_ROUNDS rounds (3) alternate between the
 *    two; the median round's ratio is the figure. Once each, for where the
 *    time goes: the same server writing each report by itself
 *    (OPSPLATFORM_METERING_GROUP_MAX=1), the raw server with the credential
 *    lookup added, and `GET /v1/subscriptions/{id}` — what the HTTP stack
 *    answers at best with one query after the credential's. autocannon in its
 *    own process, every request with a fresh identifier.
 *
 * 2. Forwarding throughput: `opsplatform worker` processes (the production
 *    command; 1, then 2) wait, ready, while the records are accepted in one
 *    transaction; the clock runs from its commit until the fake Stripe, in
 *    its own process, holds every event. The baseline is the official SDK
 *    alone calling the same fake as fast as Stripe's rule allows (one call at
 *    a time per customer and meter, every customer at once), no database.
 *
 *   npm run build && DATABASE_URL=postgres://... npx tsx --conditions source benchmarks/metering/bench.ts
 *   (without DATABASE_URL, part 1 runs on an in-memory PGlite and part 2 is skipped)
 *
 * BENCH_SECONDS (10), BENCH_CONNECTIONS (32), BENCH_ROUNDS (3); BENCH_RECORDS (3000) over BENCH_CUSTOMERS (100).
 */
import { type ChildProcess, fork, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { createServer } from "node:http"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Context, Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { Contacts, PaymentProcessor, Subscriptions, Transactor, Usage } from "@opsplatform/core"
import { makeFixture } from "@opsplatform/testing"
import { StripePaymentProcessor } from "../../packages/http-node/src/server/stripe.ts"
import { loadTest, summary } from "../support/autocannon.ts"
import { medianBy } from "../support/rounds.ts"
import { startBenchServer } from "../support/server.ts"

const here = path.dirname(fileURLToPath(import.meta.url))
const bin = path.resolve(here, "../../packages/http-node/bin/opsplatform.js")
const duration = Number(process.env.BENCH_SECONDS ?? 10)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const recordCount = Number(process.env.BENCH_RECORDS ?? 3000)
const customerCount = Number(process.env.BENCH_CUSTOMERS ?? 100)
const TEST_KEY = "sk_test_opsplatform_benchmark_0001"
const runId = Date.now().toString(36)

const { close, context, database, port: apiPort, run } = await startBenchServer()
// The same server writing each report by itself, as it did before reports were grouped.
const single = await startBenchServer({ OPSPLATFORM_METERING_GROUP_MAX: "1" })
const sql = Context.get(context, SqlClient.SqlClient)
const fixture = await run(makeFixture("Metering benchmark"))

const subscribe = (customer: string) =>
  run(Effect.gen(function*() {
    const contact = yield* (yield* Contacts.Contacts).create(fixture.sandbox, { name: `Customer ${customer}`, kind: "customer" })
    return yield* (yield* Subscriptions.Subscriptions).create(fixture.sandbox, {
      contact_id: contact.id,
      processor_customer_id: customer,
      meter_event_name: "bench_requests"
    })
  }))

// ---- 1. Accepting usage --------------------------------------------------------------------------
const subscription = await subscribe(`cus_bench${runId}accept`)

await Effect.runPromise(sql`CREATE TABLE IF NOT EXISTS usage_bench_baseline (
  id bigserial PRIMARY KEY,
  subscription_id uuid NOT NULL,
  identifier text NOT NULL,
  quantity bigint NOT NULL,
  timestamp timestamptz NOT NULL,
  UNIQUE (subscription_id, identifier)
)`)

/** The raw baseline: parse, (optionally) look the credential up, one INSERT … ON CONFLICT DO NOTHING, 200 empty. */
const rawServer = (withCredential: boolean) =>
  createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      const id = (req.url ?? "").split("/")[3]!
      const hash = createHash("sha256").update((req.headers.authorization ?? "").slice(7)).digest("hex")
      Effect.runPromise(Effect.gen(function*() {
        if (withCredential) {
          const creds = yield* sql`SELECT scopes, revoked_at FROM credentials WHERE token_hash = ${hash}`
          const c = creds[0] as any
          if (!c || c.revoked_at !== null || !String(c.scopes).split(" ").includes("payments:charge")) return false
        }
        yield* sql`INSERT INTO usage_bench_baseline (subscription_id, identifier, quantity, timestamp)
          VALUES (${id}, ${body.identifier}, ${body.quantity}, ${new Date().toISOString()})
          ON CONFLICT (subscription_id, identifier) DO NOTHING`
        return true
      })).then((ok) => res.writeHead(ok ? 200 : 401).end(), () => res.writeHead(500).end())
    })
  })

const listen = async (server: ReturnType<typeof createServer>) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return (server.address() as { port: number }).port
}
const raw = rawServer(false)
const rawPort = await listen(raw)
const rawAuth = rawServer(true)
const rawAuthPort = await listen(rawAuth)

/** Every request carries a fresh identifier. */
const load = (port: number, seconds = duration) =>
  loadTest({
    url: `http://127.0.0.1:${port}/v1/subscriptions/${subscription.id}/usage`,
    connections,
    seconds,
    method: "POST",
    idReplacement: true,
    headers: { authorization: `Bearer ${fixture.tokens.sandbox}`, "content-type": "application/json" },
    body: JSON.stringify({ quantity: 1, identifier: "[<id>]" })
  })

const countRows = async () => {
  const rows = await Effect.runPromise(sql`SELECT count(*)::int AS n FROM usage_records WHERE subscription_id = ${subscription.id}`)
  return (rows[0] as any).n as number
}

/** The same stack's floor: an authenticated read of the subscription (one query after the credential's). */
const floor = () =>
  loadTest({
    url: `http://127.0.0.1:${apiPort}/v1/subscriptions/${subscription.id}`,
    connections,
    seconds: duration,
    headers: { authorization: `Bearer ${fixture.tokens.sandbox}` }
  })

for (const port of [apiPort, single.port, rawPort, rawAuthPort]) await load(port, 3) // warm-up
/** One load of the API, checked: every request answered 200 and recorded. */
const loadApi = async (port: number) => {
  const before = await countRows()
  const result = await load(port)
  const recorded = (await countRows()) - before
  if (result.non2xx > 0 || recorded < result.requests.total) {
    throw new Error(`the API answered ${result.non2xx} non-2xx, recorded ${recorded} of ${result.requests.total}`)
  }
  return { result, recorded }
}
const ratio = (a: { readonly requests: { readonly average: number } }, b: { readonly requests: { readonly average: number } }) =>
  Math.round((a.requests.average / b.requests.average) * 100) / 100
// Rounds alternate between the API and the raw insert, so a busy moment of the machine falls on both.
const paired: Array<{ readonly api: Awaited<ReturnType<typeof loadApi>>; readonly raw: Awaited<ReturnType<typeof load>> }> = []
for (let round = 0; round < rounds; round++) paired.push({ api: await loadApi(apiPort), raw: await load(rawPort) })
const median = medianBy(paired, (p) => p.api.result.requests.average / p.raw.requests.average)
const perReport = await loadApi(single.port)
const baselineAuth = await load(rawAuthPort)
const apiFloor = await floor()
raw.close()
rawAuth.close()
await single.close()
const accepting = {
  rounds: paired.map((p) => ({ api: summary(p.api.result), rawInsert: summary(p.raw), ratio: ratio(p.api.result, p.raw) })),
  median: {
    api: { ...summary(median.api.result), recorded: median.api.recorded },
    rawInsert: summary(median.raw),
    ratio: ratio(median.api.result, median.raw)
  },
  once: {
    apiEachReportAlone: { ...summary(perReport.result), recorded: perReport.recorded },
    rawInsertWithCredentialLookup: summary(baselineAuth),
    apiFloorGetSubscription: summary(apiFloor)
  }
}
// ---- 2. Forwarding --------------------------------------------------------------------------------
let forwarding: unknown = "skipped: set DATABASE_URL (forwarders in several processes need PostgreSQL)"
// Part 1's records are load, not meant for forwarding.
await Effect.runPromise(sql`DELETE FROM usage_records WHERE subscription_id = ${subscription.id}`)
if (database._tag === "Postgres") {
  // The workers send whatever is due on the database: records left due by anything else would be timed too.
  const [{ due }] = await Effect.runPromise(sql<{ due: number }>`SELECT count(*)::int AS due FROM usage_forwarding
    WHERE status IN ('pending', 'retrying', 'sending') AND next_attempt_at <= now()`)
  if (due > 0) throw new Error(`${due} usage records are already due on this database; forward or delete them first`)
  // The fake Stripe in its own process, reporting over IPC once it holds the events expected.
  const fake = fork(path.join(here, "stripe.ts"), [TEST_KEY], {
    execArgv: ["--import", "tsx", "--conditions", "source"],
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  const fakePort = await new Promise<number>((resolve) => fake.once("message", (m: any) => resolve(m.port)))
  const arrived = (prefix: string, count: number) =>
    new Promise<number>((resolve) => {
      fake.once("message", (m: any) => resolve(m.at))
      fake.send({ prefix, count })
    })

  /** Subscriptions for `customerCount` fresh customers; `commit` then accepts `recordCount` reports over them in one transaction. */
  const seed = async (label: string) => {
    const prefix = `cus_bench${runId}${label}`
    const subs = []
    for (let c = 0; c < customerCount; c++) subs.push(await subscribe(`${prefix}${c}`))
    const commit = () =>
      run(Effect.gen(function*() {
        const usage = yield* Usage.Usage
        yield* (yield* Transactor.Transactor).withTransaction(Effect.forEach(
          Array.from({ length: recordCount }, (_, i) => i),
          (i) => usage.report(fixture.sandbox, subs[i % subs.length]!.id, { quantity: 1 + (i % 7), identifier: `r${i}` }),
          { discard: true }
        ))
        return Date.now()
      }))
    return { prefix, commit }
  }

  /** `workers` `opsplatform worker` processes, started and ready before the records commit; the clock starts at the commit. */
  const workersRun = async (workers: number) => {
    const { commit, prefix } = await seed(`w${workers}x`)
    const env = {
      ...process.env,
      OPSPLATFORM_SECRET_KEY: process.env.OPSPLATFORM_SECRET_KEY ?? "0".repeat(64),
      OPSPLATFORM_STRIPE_API_BASE: `http://127.0.0.1:${fakePort}`,
      OPSPLATFORM_STRIPE_TEST_KEY: TEST_KEY
    }
    const children: Array<ChildProcess> = []
    await Promise.all(Array.from({ length: workers }, () =>
      new Promise<void>((resolve) => {
        const child = spawn(process.execPath, [bin, "worker"], { env, stdio: ["ignore", "ignore", "pipe"] })
        children.push(child)
        let stderr = ""
        child.stderr!.on("data", (d) => {
          stderr += d
          if (stderr.includes("usage forwarder started")) resolve()
        })
      })))
    const done = arrived(prefix, recordCount)
    const started = await commit()
    const at = await done
    for (const c of children) c.kill("SIGTERM")
    await Promise.all(children.map((c) => new Promise((r) => c.once("close", r))))
    return { workers, records: recordCount, seconds: (at - started) / 1000, perSecond: Math.round(recordCount / ((at - started) / 1000)) }
  }

  /** The SDK alone: every customer's records sent one call at a time, all customers at once, no database. */
  const sdkRun = async () => {
    const prefix = `cus_bench${runId}sdk`
    const stripe = await Effect.runPromise(Effect.gen(function*() {
      return yield* PaymentProcessor.PaymentProcessor
    }).pipe(Effect.provide(StripePaymentProcessor({
      apiBase: new URL(`http://127.0.0.1:${fakePort}`),
      keys: { sandbox: Redacted.make(TEST_KEY) },
      timeoutMs: 15_000,
      appName: "opsplatform-benchmark"
    }))))
    const now = Math.floor(Date.now() / 1000)
    const started = Date.now()
    const done = arrived(prefix, recordCount)
    await Promise.all(Array.from({ length: customerCount }, async (_, c) => {
      for (let i = c; i < recordCount; i += customerCount) {
        await Effect.runPromise(stripe.send("sandbox", {
          eventName: "bench_requests",
          customerId: `${prefix}${c}`,
          value: 1 + (i % 7),
          timestamp: now,
          identifier: `${prefix}-${i}`
        }))
      }
    }))
    const at = await done
    return { records: recordCount, seconds: (at - started) / 1000, perSecond: Math.round(recordCount / ((at - started) / 1000)) }
  }

  const baselineSdk = await sdkRun()
  const one = await workersRun(1)
  const two = await workersRun(2)
  forwarding = {
    customers: customerCount,
    workers: [one, two],
    sdkAloneBaseline: baselineSdk,
    ratio: [one, two].map((w) => Math.round((w.perSecond / baselineSdk.perSecond) * 100) / 100)
  }
  fake.kill()
}

console.log(JSON.stringify({ database: database._tag, connections, durationSeconds: duration, accepting, forwarding }, null, 2))
// Nothing of the run stays due: a forwarder on this database later must not send the benchmark's usage.
await Effect.runPromise(sql`DROP TABLE IF EXISTS usage_bench_baseline`)
await Effect.runPromise(sql`DELETE FROM usage_records WHERE organization_id = ${fixture.organizationId}`)
await close()
process.exit(0)
