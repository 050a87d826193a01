import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const harnessFile = (name: string) => fileURLToPath(new URL(`./packages/testing/src/harness/${name}.ts`, import.meta.url))

/**
 * The run's shared fixtures (`@opsplatform/testing/harness`): `databases` and
 * `browser` are global setups (started once per run however many projects
 * list them), `fileDatabase` a setup file giving each test file a PostgreSQL
 * database of its own.
 */
/** Test files run at once, in every project (chosen by measurement: docs/decisions.md, "Test suite"). */
export const workers = 3

export const harness = {
  databases: harnessFile("databases"),
  browser: harnessFile("browser"),
  fileDatabase: harnessFile("fileDatabase")
}

/**
 * Tests run against the TypeScript sources of the workspace packages (the
 * `source` export condition), so no build is needed between an edit and a test.
 */
export default defineConfig({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"], externalConditions: ["source"] } },
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Each project resolves its own worker count, and vitest's default is one
    // less than the cores (one on a 2-core machine: every file in turn), so
    // the count the root configuration chose is set here, for every project.
    maxWorkers: workers,
    setupFiles: [fileURLToPath(new URL("./vitest.setup.ts", import.meta.url))],
    reporters: ["default"]
  }
})
