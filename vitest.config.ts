import { defineConfig } from "vitest/config"
import { workers } from "./vitest.shared.ts"

/**
 * `npm test` runs every package's suite in one vitest run: one pool of
 * workers takes files from all packages, each package keeps its own
 * configuration (`<package>/vitest.config.ts`), and the shared fixtures
 * (test databases, Chromium, Dovecot) start once. The worker count was
 * chosen by measurement on a 2-core machine (docs/decisions.md, "Test suite");
 * `npx vitest run --maxWorkers N` overrides it.
 */
export default defineConfig({
  test: {
    projects: [
      "packages/core",
      "packages/testing",
      "packages/webhooks-verify",
      "packages/http-node",
      "packages/client",
      "examples/embed",
      "examples/oauth-app",
      "examples/operate",
      "examples/webhooks-edge",
      "examples/webhooks-node"
    ],
    maxWorkers: workers,
    reporters: ["default", "./scripts/test-summary.ts"]
  }
})
