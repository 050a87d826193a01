import { chromium } from "playwright-core"
import type { TestProject } from "vitest/node"
import { chromiumLaunchOptions } from "../browser.ts"
import { sharedFixture } from "./once.ts"

declare module "vitest" {
  export interface ProvidedContext {
    /** The WebSocket endpoint of the run's one Chromium; each test file connects and opens contexts of its own. */
    chromiumEndpoint: string
  }
}

const browserServer = sharedFixture("chromium", async () => {
  const server = await chromium.launchServer(chromiumLaunchOptions())
  return { value: server.wsEndpoint(), stop: () => server.close() }
})

/** A vitest `globalSetup`: one headless Chromium for the whole run, shared by every project that lists this file. */
export default async function setup(project: TestProject) {
  const browser = await browserServer()
  project.provide("chromiumEndpoint", browser.value)
  return browser.release
}
