/**
 * Groups a `.cpuprofile`'s samples by where their code lives (self time):
 * the HTTP stack, schema, SQL driver, logging, this project's packages, Node
 * internals and idle; then lists the heaviest functions.
 *
 *   node --import tsx benchmarks/profile/summary.ts FILE.cpuprofile
 */
import { readFileSync } from "node:fs"

interface Node {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly children?: ReadonlyArray<number>
}
const profile = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as {
  nodes: ReadonlyArray<Node>
  samples: ReadonlyArray<number>
  timeDeltas: ReadonlyArray<number>
}
const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const self = new Map<number, number>()
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))

const area = (n: Node): string => {
  const { functionName, url } = n.callFrame
  if (functionName === "(idle)") return "idle"
  if (functionName === "(garbage collector)") return "garbage collection"
  if (functionName === "(program)") return "native (program)"
  if (url.includes("/effect/src/http-api/") || url.includes("/effect/dist/http-api/")) return "effect: HttpApi"
  if (url.includes("/effect/src/http/") || url.includes("/effect/dist/http/") || url.includes("platform-node")) return "effect: http server"
  if (url.includes("/effect/src/Schema") || url.includes("/effect/dist/Schema") || url.includes("SchemaParser") || url.includes("/schema/")) return "effect: Schema"
  if (url.includes("sql-pg") || url.includes("/effect/src/sql/") || url.includes("/effect/dist/sql/")) return "SQL client"
  if (url.includes("Logger") || url.includes("logging")) return "logging"
  if (url.includes("/effect/")) return "effect: runtime"
  if (url.includes("/packages/core/")) return "core"
  if (url.includes("/packages/http-node/")) return "http-node"
  if (url.startsWith("node:") || url === "") return "node internals"
  return "other"
}
const total = [...self.values()].reduce((a, b) => a + b, 0)
const busy = total - [...self.entries()].filter(([id]) => byId.get(id)!.callFrame.functionName === "(idle)").reduce((a, [, t]) => a + t, 0)
const areas = new Map<string, number>()
const fns = new Map<string, number>()
for (const [id, t] of self) {
  const n = byId.get(id)!
  areas.set(area(n), (areas.get(area(n)) ?? 0) + t)
  const key = `${n.callFrame.functionName || "(anonymous)"} ${n.callFrame.url.replace(/^.*\/(node_modules|packages)\//, "")}:${n.callFrame.lineNumber + 1}`
  if (area(n) !== "idle") fns.set(key, (fns.get(key) ?? 0) + t)
}
const pct = (t: number) => `${((100 * t) / busy).toFixed(1)} %`
console.log(`busy ${(busy / 1000).toFixed(0)} ms of ${(total / 1000).toFixed(0)} ms sampled`)
for (const [name, t] of [...areas].sort((a, b) => b[1] - a[1])) if (name !== "idle") console.log(`${pct(t).padStart(8)}  ${name}`)
console.log("\nheaviest functions (self time):")
for (const [name, t] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${pct(t).padStart(8)}  ${name}`)
