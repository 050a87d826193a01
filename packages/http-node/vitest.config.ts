import { defineConfig, mergeConfig } from "vitest/config"
import shared, { harness } from "../../vitest.shared.ts"

export default mergeConfig(shared, defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The configuration of servers and spawned processes: test/support/config.ts.
    globalSetup: [harness.databases, harness.browser, "test/support/globalSetup.ts"],
    setupFiles: [harness.fileDatabase]
  }
}))
