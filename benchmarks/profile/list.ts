/**
 * A CPU profile of the server answering one authenticated list under load:
 * run under `node --cpu-prof`, then `summary.ts` groups the samples.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/perf node --cpu-prof --cpu-prof-dir=/tmp/prof \
 *     --conditions source --import tsx benchmarks/profile/list.ts [path]
 *   node --import tsx benchmarks/profile/summary.ts /tmp/prof/*.cpuprofile
 *
 * Uses the large organization of `benchmarks/seed/state.json`; the path
 * defaults to the first page of its delivery routes.
 */
import { readFileSync } from "node:fs"
import { loadTest, summary } from "../support/autocannon.ts"
import { startBenchServer } from "../support/server.ts"

const state = JSON.parse(readFileSync(new URL("../seed/state.json", import.meta.url), "utf8"))
const org = state.organizations[Number(process.env.PROFILE_ORG ?? 0)]
const path = process.argv[2] ?? "/v1/delivery-routes?perPage=50"
const { close, port } = await startBenchServer()
const run = () =>
  loadTest({
    url: `http://127.0.0.1:${port}${path}`,
    connections: 16,
    seconds: Number(process.env.BENCH_SECONDS ?? 10),
    headers: { authorization: `Bearer ${org.token}` }
  })
await run()
console.log(JSON.stringify(summary(await run())))
await close()
process.exit(0)
