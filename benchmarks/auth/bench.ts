/**
 * What the credential cache saves: the same authenticated read through two real
 * servers on one PostgreSQL, one with the cache (the default) and one with
 * `OPSPLATFORM_CREDENTIAL_CACHE=off` (every request reads its credential), in
 * alternating rounds of one run; the medians are reported. The read is
 * `GET /v1/contacts/{id}` — one statement after authentication — so the
 * credential's share of a request shows. PostgreSQL only (the cache is).
 *
 *   DATABASE_URL=postgres://... npx tsx --conditions source benchmarks/auth/bench.ts
 */
import { Effect } from "effect"
import { Contacts } from "@opsplatform/core"
import { makeFixture } from "@opsplatform/testing"
import { loadTest, summary } from "../support/autocannon.ts"
import { medianBy } from "../support/rounds.ts"
import { startBenchServer } from "../support/server.ts"

if (!process.env.DATABASE_URL) throw new Error("The credential cache runs on PostgreSQL: set DATABASE_URL")
const duration = Number(process.env.BENCH_SECONDS ?? 8)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)

const cached = await startBenchServer()
const uncached = await startBenchServer({ OPSPLATFORM_CREDENTIAL_CACHE: "off" })
try {
  const fixture = await cached.run(makeFixture("Credential cache benchmark"))
  const contact = await cached.run(Effect.flatMap(Contacts.Contacts, (c) => c.create(fixture.live, { name: "Bench SRL", kind: "customer" })))
  const load = (port: number, seconds = duration) =>
    loadTest({
      url: `http://127.0.0.1:${port}/v1/contacts/${contact.id}`,
      connections,
      seconds,
      headers: { authorization: `Bearer ${fixture.tokens.api}` }
    })
  // Both answer the same, and warm up.
  for (const port of [cached.port, uncached.port]) {
    const r = await fetch(`http://127.0.0.1:${port}/v1/contacts/${contact.id}`, { headers: { authorization: `Bearer ${fixture.tokens.api}` } })
    if (r.status !== 200) throw new Error(`the server on ${port} answered ${r.status}`)
    await load(port, 2)
  }
  const on: Array<ReturnType<typeof summary>> = []
  const off: Array<ReturnType<typeof summary>> = []
  for (let round = 0; round < rounds; round++) {
    off.push(summary(await load(uncached.port)))
    on.push(summary(await load(cached.port)))
  }
  const median = (runs: ReadonlyArray<ReturnType<typeof summary>>) => medianBy(runs, (r) => r.requestsPerSecond)
  const row = (name: string, m: ReturnType<typeof summary>) =>
    `| ${name} | ${m.requestsPerSecond} | ${m.latencyP50Ms} | ${m.latencyP99Ms} | ${m.non2xx} |`
  console.log(`${rounds} rounds of ${duration} s, ${connections} connections, node ${process.version}`)
  console.log("| `GET /v1/contacts/{id}` (median round) | requests/s | p50 ms | p99 ms | non-2xx |")
  console.log("|---|---|---|---|---|")
  console.log(row("credential read on every request (`OPSPLATFORM_CREDENTIAL_CACHE=off`)", median(off)))
  console.log(row("credential cache (default)", median(on)))
  console.log(`| **ratio** | **${(median(on).requestsPerSecond / median(off).requestsPerSecond).toFixed(2)}** | | | |`)
  console.log(`rounds (off / on req/s): ${off.map((o, i) => `${o.requestsPerSecond} / ${on[i]!.requestsPerSecond}`).join(", ")}`)
} finally {
  await uncached.close()
  await cached.close()
}
process.exit(0)
