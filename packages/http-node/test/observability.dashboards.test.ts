import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testDatabases } from "./support/databases.ts"
import { prometheusBin } from "./support/prometheus.ts"
import { startTestServer, type TestServer } from "./support/server.ts"

const docs = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../docs/observability")
const alertsFile = path.join(docs, "alerts.yml")
const dashboardFile = path.join(docs, "grafana-dashboard.json")
const promtool = prometheusBin("promtool")

/** The metric names a PromQL expression reads (every one of ours starts `opsplatform_`). */
const metricNames = (expr: string): ReadonlyArray<string> =>
  [...expr.matchAll(/\bopsplatform_[a-z0-9_]+/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, ""))

const dashboardExpressions = (): ReadonlyArray<string> => {
  const dashboard = JSON.parse(fs.readFileSync(dashboardFile, "utf8")) as {
    readonly panels: ReadonlyArray<{ readonly targets?: ReadonlyArray<{ readonly expr: string }> }>
  }
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr))
}

const alertExpressions = (): ReadonlyArray<string> =>
  // The rules' `expr:` values, single-line or block (promtool checks the YAML itself).
  fs.readFileSync(alertsFile, "utf8").split(/\n(?=\s*- alert:)/).flatMap((block) => {
    const at = block.indexOf("expr:")
    return at < 0 ? [] : [block.slice(at + 5, block.indexOf("for:", at))]
  })

describe("the alert rules and the dashboard", () => {
  const db = testDatabases()[0]!
  let server: TestServer
  let exposition: string
  beforeAll(async () => {
    server = await startTestServer(db.choice(), { env: { OPSPLATFORM_METRICS_PORT: "0" } })
    exposition = await (await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)).text()
  })
  afterAll(async () => {
    await server?.close()
  })

  it("pass promtool's checks: the rules, and the server's exposition", () => {
    expect(execFileSync(promtool, ["check", "rules", alertsFile], { encoding: "utf8" })).toContain("SUCCESS: 4 rules found")
    // `check metrics` lints the exposition format and the naming conventions; it exits non-zero on a problem.
    execFileSync(promtool, ["check", "metrics"], { input: exposition, encoding: "utf8" })
  })

  it("alert on the four that matter: the oldest due delivery, dead deliveries, the forwarder's backlog and 5xx", () => {
    const names = new Set(alertExpressions().flatMap(metricNames))
    expect([...names].sort()).toEqual([
      "opsplatform_http_requests_total",
      "opsplatform_metering_oldest_waiting_age_seconds",
      "opsplatform_webhook_deliveries_dead_total",
      "opsplatform_webhook_oldest_due_age_seconds"
    ])
  })

  it("read only metrics the server exports", () => {
    const exported = new Set([...exposition.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!))
    const expressions = [...alertExpressions(), ...dashboardExpressions()]
    expect(expressions.length).toBeGreaterThan(20)
    for (const expr of expressions) {
      for (const name of metricNames(expr)) expect(exported, `${name} in ${expr}`).toContain(name)
    }
  })

  it("are valid PromQL, as the scraping Prometheus parses them", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "opsplatform-rules-"))
    try {
      // Every dashboard query as a recording rule: promtool parses each expression.
      const rules = dashboardExpressions().map((expr, i) =>
        `      - record: dashboard:query_${i}\n        expr: ${JSON.stringify(expr.replaceAll("$__rate_interval", "5m").replaceAll("$instance", ".*"))}`)
      fs.writeFileSync(path.join(dir, "dashboard.yml"), `groups:\n  - name: dashboard\n    rules:\n${rules.join("\n")}\n`)
      expect(execFileSync(promtool, ["check", "rules", path.join(dir, "dashboard.yml")], { encoding: "utf8" })).toContain("SUCCESS")
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
