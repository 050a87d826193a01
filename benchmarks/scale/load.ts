/**
 * The mixed load of `bench.ts`, in its own process: `CONNECTIONS` loops, each
 * sending one request at a time to the servers in turn for `SECONDS`:
 * half reads (`GET /v1/delivery-routes`), three in ten writes that publish an
 * event (`POST /v1/fleet-vehicles` → `fleet_vehicle.created`), two in ten cost
 * comparisons of a 30-stop route. Prints what it saw as JSON: counts per
 * operation and status class, latencies, and the ids of the vehicles whose
 * creation was acknowledged.
 */
const ports = (process.env.PORTS ?? "").split(",").map(Number)
const token = process.env.TOKEN ?? ""
const routeId = process.env.ROUTE_ID ?? ""
const seconds = Number(process.env.SECONDS ?? 60)
const connections = Number(process.env.CONNECTIONS ?? 32)
const platePrefix = process.env.PLATE_PREFIX ?? "CD"

const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" }
type Op = "read" | "write" | "compare"
const counts: Record<Op, Record<string, number>> = { read: {}, write: {}, compare: {} }
const latencies: Array<number> = []
const acknowledged: Array<string> = []
let plate = 0
let turn = 0

const once = async () => {
  const port = ports[turn++ % ports.length]!
  const dice = Math.random()
  const op: Op = dice < 0.5 ? "read" : dice < 0.8 ? "write" : "compare"
  const started = performance.now()
  let status = 0
  try {
    if (op === "read") {
      const res = await fetch(`http://127.0.0.1:${port}/v1/delivery-routes?perPage=25`, { headers })
      status = res.status
      await res.arrayBuffer()
    } else if (op === "compare") {
      const res = await fetch(`http://127.0.0.1:${port}/v1/delivery-routes/${routeId}/cost-comparison`, { headers })
      status = res.status
      await res.arrayBuffer()
    } else {
      const n = plate++
      const res = await fetch(`http://127.0.0.1:${port}/v1/fleet-vehicles`, {
        method: "POST",
        headers,
        body: JSON.stringify({ plate: `${platePrefix}${String(n).padStart(6, "0")}`, fuel_type: "diesel" })
      })
      status = res.status
      const json = await res.json() as any
      if (status === 201) acknowledged.push(json.data.id)
    }
  } catch {
    status = 0
  }
  latencies.push(performance.now() - started)
  const key = status === 0 ? "network" : `${Math.floor(status / 100)}xx`
  counts[op][key] = (counts[op][key] ?? 0) + 1
}

const until = Date.now() + seconds * 1000
await Promise.all(Array.from({ length: connections }, async () => {
  while (Date.now() < until) await once()
}))
latencies.sort((a, b) => a - b)
const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]! * 10) / 10
console.log(JSON.stringify({
  requests: latencies.length,
  perSecond: Math.round(latencies.length / seconds),
  p50: at(0.5),
  p99: at(0.99),
  counts,
  acknowledged
}))
