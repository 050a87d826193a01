/**
 * What acting for a client costs: `GET /v1/invoices` (25 of 40 invoices) sent
 * by a cabinet's key with `Opsplatform-Organization` against the same request
 * sent by the client's own key, on the same server and database in the same
 * run. The cabinet holds an active grant with each of `BENCH_CLIENTS` clients
 * (default 500), so the grant lookup runs against a realistic index. The
 * difference is the grant lookup and the audit row every such request writes.
 * Rounds alternate (`BENCH_ROUNDS`, default 3, `BENCH_SECONDS` each); the
 * median round is reported with every round's ratio.
 *
 *   DATABASE_URL=postgres://... npx tsx --conditions source benchmarks/grants/bench.ts
 *   (without DATABASE_URL it uses an in-memory PGlite)
 */
import type autocannon from "autocannon"
import { Effect } from "effect"
import { Contacts, Grants, Invoices, Tenancy } from "@opsplatform/core"
import { makeFixture, uniqueCui } from "@opsplatform/testing"
import { loadTest, summary } from "../support/autocannon.ts"
import { medianBy } from "../support/rounds.ts"
import { startBenchServer } from "../support/server.ts"

const duration = Number(process.env.BENCH_SECONDS ?? 10)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32)
const clients = Number(process.env.BENCH_CLIENTS ?? 500)
const { close, database, port, run } = await startBenchServer()

const cabinet = await run(makeFixture("Benchmark cabinet"))
const client = await run(makeFixture("Benchmark client"))
const actor = { credentialId: null, organizationId: cabinet.organizationId, requestId: null }

/** An active read grant from the cabinet to a client with a VAT number. */
const grant = (clientId: string) =>
  Effect.gen(function*() {
    const tenancy = yield* Tenancy.Tenancy
    const grants = yield* Grants.Grants
    const vat = uniqueCui()
    yield* tenancy.updateSettings(clientId, { vat_number: vat })
    const asked = yield* grants.request(cabinet.live, actor, { counterparty_vat_number: vat, role: "cabinet" })
    yield* grants.approve({ organizationId: clientId, environment: "live" }, { ...actor, organizationId: clientId }, asked.id)
  })

await run(Effect.gen(function*() {
  const tenancy = yield* Tenancy.Tenancy
  for (let i = 1; i < clients; i++) yield* grant((yield* tenancy.createOrganization({ name: `Client ${i}` })).id)
  yield* grant(client.organizationId)
  const contact = yield* (yield* Contacts.Contacts).create(client.live, { name: "Customer", kind: "customer" })
  const invoices = yield* Invoices.Invoices
  for (let i = 0; i < 40; i++) {
    yield* invoices.create(client.live, {
      contact_id: contact.id,
      currency: "RON",
      lines: [{ description: `Line ${i}`, quantity: "1", unit_price: "100", vat_rate: 21 }]
    })
  }
}).pipe(Effect.orDie))

const url = `http://127.0.0.1:${port}/v1/invoices`
const direct = { authorization: `Bearer ${client.tokens.api}` }
const onBehalf = { authorization: `Bearer ${cabinet.tokens.api}`, "opsplatform-organization": client.organizationId }

const load = (headers: Record<string, string>) => loadTest({ url, headers, connections, seconds: duration })

// Sanity: both answer the same page.
const a = await (await fetch(url, { headers: direct })).json()
const b = await (await fetch(url, { headers: onBehalf })).json()
if (JSON.stringify(a) !== JSON.stringify(b) || a.data.length !== 25) throw new Error("the two requests disagree")

await load(direct) // warm-up
await load(onBehalf)
// Alternating rounds, so load from elsewhere on the machine falls on both alike; the median round is reported.
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const pairs: Array<{ baseline: autocannon.Result; acting: autocannon.Result; ratio: number }> = []
for (let i = 0; i < rounds; i++) {
  const baseline = await load(direct)
  const acting = await load(onBehalf)
  pairs.push({ baseline, acting, ratio: acting.requests.average / baseline.requests.average })
}
const { acting, baseline } = medianBy(pairs, (p) => p.ratio)
console.log(JSON.stringify({
  database: database._tag,
  connections,
  durationSeconds: duration,
  grantsOfTheCabinet: clients,
  clientsOwnKey: summary(baseline),
  cabinetActingForTheClient: summary(acting),
  ratio: Math.round((acting.requests.average / baseline.requests.average) * 100) / 100,
  ratioPerRound: pairs.map((p) => Math.round(p.ratio * 100) / 100)
}, null, 2))
await close()
process.exit(0)
