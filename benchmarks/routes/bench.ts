/**
 * The cost comparison of a 200-stop route: the math alone (target < 5 ms),
 * against one pass of the distance model over the same stops as the baseline;
 * and through HTTP, against reading the same route (with its 200 stops) as the
 * baseline, on the same server and database in the same run.
 *
 *   npx tsx --conditions source benchmarks/routes/bench.ts
 *   DATABASE_URL=postgres://... npx tsx --conditions source benchmarks/routes/bench.ts
 */
import { measure } from "mitata"
import { Comparison, FleetCost, Geo, Optimizer, Pricing } from "@opsplatform/core"
import type { RateCard } from "@opsplatform/core/costing/model"
import { makeFixture, makeRouteFixture, sampleDepot, sampleFleetCostProfile, sampleRateCard, sampleStops } from "@opsplatform/testing"
import { startBenchServer } from "../support/server.ts"

const STOPS = 200
const model = Geo.defaultDistanceModel

// ---- The math alone ----------------------------------------------------------

const given = sampleStops(STOPS).map((s, i) => ({
  ...s,
  id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
  parcels: s.parcels ?? 1,
  weight_kg: s.weight_kg ?? 0,
  serviceSeconds: (s.service_minutes ?? 5) * 60,
  metresFromStart: Math.round(Geo.roadMetres(model, sampleDepot, s))
}))
// The same stops in the order the built-in optimizer gives them (a planned route).
const planned = Optimizer.planRoute(model, { start: sampleDepot, roundTrip: true, stops: given }).order.map((i) => given[i]!)
const card: RateCard = { ...sampleRateCard, updated_at: "2026-01-01T00:00:00.000Z" }
const input = (
  mode: "MARGINAL" | "FULL",
  stops: typeof given,
  prices: ReturnType<typeof Pricing.priceStops> = Pricing.priceStops(stops, new Map(), card)
): Comparison.ComparisonInput => {
  const metres = Geo.pathMetres(model, sampleDepot, stops, true)
  return {
    currency: "RON",
    mode,
    rates: FleetCost.fleetRates({ ...sampleFleetCostProfile, co2_grams_per_litre: 3197 } as any),
    model,
    start: sampleDepot,
    roundTrip: true,
    trip: { metres, seconds: Geo.driveSeconds(model, metres) + stops.reduce((sum, s) => sum + s.serviceSeconds, 0) },
    stops,
    prices,
    senderMissing: false
  }
}
// Worst case for the greedy hybrid: every stop is far cheaper by courier, so all 200 move one by one.
const penny = given.map(() => ({ courier: "Penny Post", amountMinor: 1, estimated: false }))
const cases = {
  plannedMarginal: input("MARGINAL", planned),
  plannedFull: input("FULL", planned),
  givenOrder: input("MARGINAL", given),
  everyStopMoves: input("MARGINAL", planned, penny)
}
const moved = Object.fromEntries(Object.entries(cases).map(([k, v]) => [k, Comparison.compareRoute(v).hybridStops.length]))
if (Comparison.compareRoute(cases.everyStopMoves).verdict !== "COURIER") throw new Error("the worst case should end at the courier")

const ms = (ns: number) => Math.round(ns / 1e4) / 100
const math: Record<string, { avg: number; p50: number; p99: number }> = {}
const record = async (name: string, fn: () => unknown) => {
  const stats = await measure(fn, { min_cpu_time: 1e9 })
  math[name] = { avg: ms(stats.avg), p50: ms(stats.p50), p99: ms(stats.p99) }
}
await record("baseline: distance of the route (pathMetres)", () => Geo.pathMetres(model, sampleDepot, planned, true))
await record(`planned route, MARGINAL (${moved.plannedMarginal} stops to courier)`, () => Comparison.compareRoute(cases.plannedMarginal))
await record(`planned route, FULL (${moved.plannedFull} stops to courier)`, () => Comparison.compareRoute(cases.plannedFull))
await record(`unplanned order, MARGINAL (${moved.givenOrder} stops to courier)`, () => Comparison.compareRoute(cases.givenOrder))
// Every stop moves, which is the pure courier option: the response lists no split.
await record("worst case, MARGINAL (all 200 stops move, one greedy round each)", () => Comparison.compareRoute(cases.everyStopMoves))
const baseline = math["baseline: distance of the route (pathMetres)"]!.avg
const mathRows = Object.entries(math).map(([name, s]) => ({ name, ...s, ratio: Math.round((s.avg / baseline) * 10) / 10 }))

// ---- Through HTTP --------------------------------------------------------------

const { close, database, port, run } = await startBenchServer({ OPSPLATFORM_HEAVY_RATE_PER_MIN: "1000000" })
const fixture = await run(makeFixture("Benchmark"))
const route = await run(makeRouteFixture(fixture.live, { stops: STOPS }))
await fetch(`http://127.0.0.1:${port}/v1/delivery-routes/${route.id}/optimize`, {
  method: "POST",
  headers: { authorization: `Bearer ${fixture.tokens.api}` }
})

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200)
const latency = async (path: string) => {
  const get = () => fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${fixture.tokens.api}` } })
  for (let i = 0; i < 20; i++) await (await get()).arrayBuffer()
  const times: Array<number> = []
  for (let i = 0; i < REQUESTS; i++) {
    const began = performance.now()
    const res = await get()
    await res.arrayBuffer()
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}`)
    times.push(performance.now() - began)
  }
  times.sort((a, b) => a - b)
  const at = (q: number) => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))]! * 100) / 100
  return { p50: at(0.5), p99: at(0.99), avg: Math.round((times.reduce((a, b) => a + b, 0) / times.length) * 100) / 100 }
}
const read = await latency(`/v1/delivery-routes/${route.id}`)
const compare = await latency(`/v1/delivery-routes/${route.id}/cost-comparison`)
const compareFull = await latency(`/v1/delivery-routes/${route.id}/cost-comparison?mode=full`)
await close()

const httpRows = [
  { name: "baseline: GET /v1/delivery-routes/{id} (200 stops)", ...read, ratio: 1 },
  { name: "GET …/cost-comparison", ...compare, ratio: Math.round((compare.p50 / read.p50) * 10) / 10 },
  { name: "GET …/cost-comparison?mode=full", ...compareFull, ratio: Math.round((compareFull.p50 / read.p50) * 10) / 10 }
]

console.log(JSON.stringify({ stops: STOPS, database: database._tag, math: mathRows, http: httpRows }, null, 2))
