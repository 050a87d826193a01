import { defineConfig, mergeConfig } from "vitest/config"
import shared, { harness } from "../../vitest.shared.ts"

export default mergeConfig(shared, defineConfig({ test: { include: ["test/**/*.test.ts"], globalSetup: [harness.browser] } }))
