import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { freePort } from "./ports.ts"

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's one Prometheus, started by the global setup (`startPrometheus`). */
    prometheus: PrometheusServer
  }
}

/** The release scripts/ensure-prometheus.sh downloads (Debian's package, pinned there by SHA-256). */
const VERSION = "2.42.0+ds-5+deb12u1"

/** Where scripts/ensure-prometheus.sh unpacks Prometheus and promtool. */
export const prometheusBin = (tool: "prometheus" | "promtool"): string => {
  const arch = os.arch() === "arm64" ? "arm64" : "amd64"
  const cache = process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache")
  return path.join(cache, "opsplatform", `prometheus-${VERSION}-${arch}`, "usr", "bin", tool)
}

/**
 * A real Prometheus on a loopback port with its own configuration and storage
 * in a temporary directory, scraping every second whatever targets the tests
 * list in `targetsDir` (file-based discovery: a JSON file per target).
 */
export interface PrometheusServer {
  readonly url: string
  readonly targetsDir: string
}

export const startPrometheus = async (): Promise<{ readonly server: PrometheusServer; readonly stop: () => Promise<void> }> => {
  const binary = prometheusBin("prometheus")
  if (!fs.existsSync(binary)) {
    throw new Error(`${binary} is missing: run \`bash scripts/ensure-prometheus.sh\` (the root \`npm test\` runs it)`)
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "opsplatform-prometheus-"))
  const targetsDir = path.join(dir, "targets")
  fs.mkdirSync(targetsDir)
  fs.writeFileSync(
    path.join(dir, "prometheus.yml"),
    `global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: opsplatform
    file_sd_configs:
      - files: ["${targetsDir}/*.json"]
        refresh_interval: 1s
`
  )
  const port = await freePort()
  const child: ChildProcess = spawn(binary, [
    `--config.file=${path.join(dir, "prometheus.yml")}`,
    `--storage.tsdb.path=${path.join(dir, "data")}`,
    `--web.listen-address=127.0.0.1:${port}`,
    "--log.level=warn"
  ], { stdio: ["ignore", "pipe", "pipe"] })
  let output = ""
  child.stdout!.on("data", (d) => (output += d))
  child.stderr!.on("data", (d) => (output += d))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  // A test process that ends without stopping it takes its Prometheus along.
  const orphanGuard = () => child.kill("SIGKILL")
  process.once("exit", orphanGuard)
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 30_000
  for (;;) {
    const ready = await fetch(`${url}/-/ready`).then((r) => r.ok, () => false)
    if (ready) break
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL")
      throw new Error(`Prometheus did not start on ${url}:\n${output}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  return {
    server: { url, targetsDir },
    stop: async () => {
      process.removeListener("exit", orphanGuard)
      child.kill("SIGTERM")
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))])
      if (child.exitCode === null) child.kill("SIGKILL")
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** One series of an instant query's answer. */
export interface Sample {
  readonly metric: Readonly<Record<string, string>>
  readonly value: number
}

/** The run's Prometheus as a test file uses it. */
export const prometheusFor = (server: PrometheusServer) => {
  const query = async (promql: string): Promise<ReadonlyArray<Sample>> => {
    const response = await fetch(`${server.url}/api/v1/query?query=${encodeURIComponent(promql)}`)
    const body = await response.json() as {
      readonly status: string
      readonly error?: string
      readonly data: { readonly result: ReadonlyArray<{ readonly metric: Record<string, string>; readonly value: [number, string] }> }
    }
    if (body.status !== "success") throw new Error(`Prometheus refused ${promql}: ${body.error}`)
    return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }))
  }
  return {
    /** Has Prometheus scrape `127.0.0.1:port` under `instance="<name>"` until `forget`. */
    scrape: (name: string, port: number) => {
      const file = path.join(server.targetsDir, `${name}.json`)
      fs.writeFileSync(`${file}.tmp`, JSON.stringify([{ targets: [`127.0.0.1:${port}`], labels: { instance: name } }]))
      // Renamed into place, so discovery never reads half a file.
      fs.renameSync(`${file}.tmp`, file)
      return { forget: () => fs.rmSync(file, { force: true }) }
    },
    query,
    /**
     * Asks `promql` until its answer passes `accept` (scrapes come every
     * second), and answers it; the last answer is in the error when none did.
     */
    until: async (promql: string, accept: (samples: ReadonlyArray<Sample>) => boolean, waitMs = 30_000) => {
      const deadline = Date.now() + waitMs
      let last: ReadonlyArray<Sample> = []
      while (Date.now() < deadline) {
        last = await query(promql)
        if (accept(last)) return last
        await new Promise((r) => setTimeout(r, 250))
      }
      throw new Error(`${promql} never gave the expected answer; the last was ${JSON.stringify(last)}`)
    }
  }
}
