import type { TestProject } from "vitest/node"
import { startDovecot } from "./dovecot.ts"
import { startPrivatePostgres } from "./privatePostgres.ts"
import { startPrometheus } from "./prometheus.ts"

/**
 * The servers of the whole run that only this package's tests use, started
 * once and at the same time: Dovecot for the mail tests, the private
 * PostgreSQL the fault tests stop and start, and the Prometheus that scrapes
 * the metrics tests' servers. (The test databases and Chromium
 * come from `@opsplatform/testing/harness`, shared with the other packages.)
 */
export default async function setup(project: TestProject) {
  const [dovecot, postgres, prometheus] = await Promise.all([startDovecot(), startPrivatePostgres(), startPrometheus()])
  project.provide("dovecot", dovecot.server)
  project.provide("privatePostgres", postgres.server)
  project.provide("prometheus", prometheus.server)
  return async () => {
    await Promise.all([dovecot.stop(), postgres.destroy(), prometheus.stop()])
  }
}
