import type { TestProject } from "vitest/node"
import { startDovecot } from "./dovecot.ts"
import { startPrivatePostgres } from "./privatePostgres.ts"

/**
 * The servers of the whole run that only this package's tests use, started
 * once and at the same time: Dovecot for the mail tests and the private
 * PostgreSQL the fault tests stop and start. (The test databases and Chromium
 * come from `@opsplatform/testing/harness`, shared with the other packages.)
 */
export default async function setup(project: TestProject) {
  const [dovecot, postgres] = await Promise.all([startDovecot(), startPrivatePostgres()])
  project.provide("dovecot", dovecot.server)
  project.provide("privatePostgres", postgres.server)
  return async () => {
    await Promise.all([dovecot.stop(), postgres.destroy()])
  }
}
