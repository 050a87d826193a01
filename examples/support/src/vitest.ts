import { defineConfig, mergeConfig } from "vitest/config"
import shared, { harness } from "../../../vitest.shared.ts"

/** The vitest configuration of a test suite that uses this harness. */
export default mergeConfig(shared, defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: [harness.databases, harness.browser],
    setupFiles: [harness.fileDatabase],
    // The operator key servers on PostgreSQL need for webhook secrets (a test value, never a real one).
    env: { OPSPLATFORM_SECRET_KEY: "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f" }
  }
}))
