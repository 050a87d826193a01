/**
 * List endpoints at depth, on the data `benchmarks/seed/seed.ts` wrote: the
 * real server against a raw `node:http` server running the same SQL through
 * the same driver (the same connection pool), in the same run.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/perf npx tsx --conditions source benchmarks/lists/bench.ts
 *
 * The baseline replays, for each request, exactly the statements the API ran
 * for the same URL (captured once through Effect SQL's statement transformer:
 * the credential lookup, the count or the planner's estimate, the window, the
 * attempts of deliveries) and writes the rows as JSON: no routing, no
 * middleware, no schema, no logging. Both are driven by autocannon in its own
 * process, `BENCH_CONNECTIONS` (16) connections for `BENCH_SECONDS` (5) after a
 * warm-up. Prints a JSON report; `BENCH_ONLY` (a substring) picks scenarios.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient, Statement } from "effect/sql"
import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import { loadTest } from "../support/autocannon.ts"
import { startBenchServer } from "../support/server.ts"

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16)
const only = process.env.BENCH_ONLY?.split(",")
const state = JSON.parse(readFileSync(new URL("../seed/state.json", import.meta.url), "utf8")) as {
  organizations: ReadonlyArray<{ organizationId: string; token: string; rows: number; webhookId: string }>
}
const [large, small] = state.organizations
if (large === undefined || small === undefined) throw new Error("Run benchmarks/seed/seed.ts first")

type Captured = readonly [string, ReadonlyArray<unknown>]
let capturing: Array<Captured> | undefined
const capture = Layer.succeed(Statement.CurrentTransformer, (self: Statement.Statement<unknown>) =>
  Effect.sync(() => {
    capturing?.push(self.compile())
    return self
  })) as Layer.Layer<never>

const { close, context, port: apiPort } = await startBenchServer(undefined, capture)
const sql = Context.get(context, SqlClient.SqlClient)

const get = async (path: string, token: string) => {
  const res = await fetch(`http://127.0.0.1:${apiPort}${path}`, { headers: { authorization: `Bearer ${token}` } })
  const json = await res.json() as any
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${JSON.stringify(json)}`)
  return json
}

/**
 * The statements one API request runs in the steady state — the second of two,
 * after the first has made what a list remembers (a long list's estimate) —
 * the credential's last-used stamp aside (written once a minute).
 */
const statementsOf = async (path: string, token: string) => {
  await get(path, token)
  capturing = []
  const json = await get(path, token)
  const statements = capturing.filter(([text]) => !/^\s*UPDATE credentials/i.test(text))
  capturing = undefined
  return { statements, json }
}

/** A cursor to the page holding rows 49 951–50 000: walked 100 at a time, then 50. */
const deepCursor = async (path: string, token: string) => {
  const join = path.includes("?") ? "&" : "?"
  let cursor: string | null = null
  for (let i = 0; i < 499; i++) {
    const json: any = await get(`${path}${join}perPage=100${cursor === null ? "" : `&cursor=${cursor}`}`, token)
    cursor = json.meta.nextCursor
    if (cursor === null) throw new Error(`${path} ends before row 49 900`)
  }
  const json: any = await get(`${path}${join}perPage=50&cursor=${cursor}`, token)
  return json.meta.nextCursor as string
}

interface Scenario {
  readonly name: string
  readonly path: string
  readonly token: string
}
const lists = [
  {
    list: "delivery routes",
    path: "/v1/delivery-routes",
    filters: ["status=DISPATCHED", "status=CANCELLED&date_from=2026-01-01&date_to=2026-01-31", "date_from=2026-02-01&date_to=2026-02-07"]
  },
  {
    list: "obligations",
    path: "/v1/contract-obligations",
    filters: ["status=pending", "bucket=overdue", "type=report", "obligor=us", "due_from=2026-01-01&due_to=2026-01-31"]
  },
  {
    list: "invoices",
    path: "/v1/invoices",
    filters: ["status=SENT", "overdue=true", "issue_date_from=2026-01-01&issue_date_to=2026-01-31"]
  },
  {
    list: "webhook deliveries",
    path: `/v1/webhooks/${large.webhookId}/deliveries`,
    filters: ["status=dead"]
  }
]

const scenarios: Array<Scenario> = []
for (const { filters, list, path } of lists) {
  scenarios.push({ name: `${list}: page 1`, path: `${path}?perPage=50`, token: large.token })
  scenarios.push({ name: `${list}: page 1 000 by offset`, path: `${path}?perPage=50&page=1000`, token: large.token })
  scenarios.push({ name: `${list}: page 1 000 by cursor`, path, token: large.token })
  for (const filter of filters) scenarios.push({ name: `${list}: ${filter}`, path: `${path}?perPage=50&${filter}`, token: large.token })
  const smallPath = list === "webhook deliveries" ? `/v1/webhooks/${small.webhookId}/deliveries` : path
  scenarios.push({ name: `${list}: page 1, small organization`, path: `${smallPath}?perPage=50`, token: small.token })
}

const bigintAsString = (_key: string, value: unknown) => typeof value === "bigint" ? value.toString() : value

/** The baseline: replays one scenario's statements and writes the window's rows in the envelope. */
const replay: Array<{ statements: ReadonlyArray<Captured>; meta: unknown }> = []
const raw = createServer((req, res) => {
  const scenario = replay[Number((req.url ?? "").slice(1))]
  if (scenario === undefined) return void res.writeHead(404).end()
  Effect.runPromise(Effect.gen(function*() {
    let data: ReadonlyArray<unknown> = []
    for (const [text, params] of scenario.statements) {
      const rows = yield* sql.unsafe(text, params as Array<unknown>)
      if (/WHERE id IN \(SELECT id FROM/.test(text)) data = rows
    }
    return data
  })).then(
    (data) =>
      res.writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ data: data.slice(0, 50), error: null, meta: scenario.meta }, bigintAsString)),
    () => res.writeHead(500).end()
  )
})
await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve))
const rawPort = (raw.address() as { port: number }).port

const measure = async (url: string, token: string) => {
  const r = await loadTest({ url, connections, seconds, headers: { authorization: `Bearer ${token}` } })
  return { rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors }
}

const results = []
for (const scenario of scenarios) {
  if (only !== undefined && !only.some((o) => scenario.name.includes(o))) continue
  let path = scenario.path
  if (scenario.name.endsWith("by cursor")) {
    path = `${scenario.path}?perPage=50&cursor=${await deepCursor(scenario.path, scenario.token)}`
  }
  const { json, statements } = await statementsOf(path, scenario.token)
  if (process.env.BENCH_SHOW_SQL) for (const [text] of statements) process.stderr.write(`  ${text.replace(/\s+/g, " ").slice(0, 160)}\n`)
  replay.push({ statements, meta: json.meta })
  const rawUrl = `http://127.0.0.1:${rawPort}/${replay.length - 1}`
  const apiUrl = `http://127.0.0.1:${apiPort}${path}`
  await measure(apiUrl, scenario.token) // warm-up
  await measure(rawUrl, scenario.token)
  const api = await measure(apiUrl, scenario.token)
  const baseline = await measure(rawUrl, scenario.token)
  const row = {
    scenario: scenario.name,
    rows: json.data.length,
    total: json.meta.total,
    estimated: json.meta.totalEstimated === true,
    statements: statements.length,
    api,
    raw: baseline,
    throughputRatio: Math.round((api.rps / baseline.rps) * 100) / 100,
    p99Ratio: Math.round((api.p99 / Math.max(baseline.p99, 1)) * 100) / 100
  }
  results.push(row)
  process.stderr.write(`${JSON.stringify(row)}\n`)
}
console.log(JSON.stringify({ connections, seconds, results }, null, 2))
raw.close()
await close()
process.exit(0)
