import type autocannon from "autocannon"
import { spawn } from "node:child_process"
import { createRequire } from "node:module"

const require = createRequire(import.meta.url)

/** autocannon in its own process, so the load generator does not share the servers' event loop. */
export const loadTest = (options: {
  readonly url: string
  readonly connections: number
  readonly seconds: number
  readonly headers: Record<string, string>
  readonly method?: "GET" | "POST"
  readonly body?: string
  /** Replace `[<id>]` in the body with a fresh id on every request. */
  readonly idReplacement?: boolean
}): Promise<autocannon.Result> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [
      require.resolve("autocannon/autocannon.js"),
      "-j", "-c", String(options.connections), "-d", String(options.seconds),
      "-m", options.method ?? "GET",
      ...(options.idReplacement ? ["-I"] : []),
      ...Object.entries(options.headers).flatMap(([k, v]) => ["-H", `${k}=${v}`]),
      ...(options.body === undefined ? [] : ["-b", options.body]),
      options.url
    ], { stdio: ["ignore", "pipe", "ignore"] })
    let out = ""
    child.stdout.on("data", (d) => (out += d))
    child.on("error", reject)
    child.on("close", () => resolve(JSON.parse(out)))
  })

/** The figures a benchmark prints of one load test. */
export const summary = (r: autocannon.Result) => ({
  requestsPerSecond: Math.round(r.requests.average),
  latencyP50Ms: r.latency.p50,
  latencyP99Ms: r.latency.p99,
  non2xx: r.non2xx,
  errors: r.errors
})
