import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

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
    setupFiles: [fileURLToPath(new URL("./vitest.setup.ts", import.meta.url))],
    reporters: ["default"]
  }
})
