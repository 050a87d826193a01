import { existsSync } from "node:fs"
import { type Browser, chromium } from "playwright-core"
import { inject } from "vitest"
import type {} from "./harness/browser.ts"

/** Debian's Chromium, which `npm test` installs when missing (scripts/ensure-chromium.sh); tests never download a browser. */
export const chromiumPath = "/usr/bin/chromium"

/**
 * Options for `chromium.launch` (playwright-core) on the test machines:
 * headless without the sandbox (tests run as root), and with none of the
 * background networking that a closed network refuses at every start.
 * Throws when the browser is missing, so a browser test fails loudly rather
 * than passing without having run.
 */
export const chromiumLaunchOptions = () => {
  if (!existsSync(chromiumPath)) {
    throw new Error(`${chromiumPath} is missing: install Debian's chromium (scripts/ensure-chromium.sh does it)`)
  }
  return {
    executablePath: chromiumPath,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  }
}

/**
 * The run's one Chromium (started by the `harness/browser` global setup),
 * connected for this test file; `close()` disconnects and leaves it running.
 * Each test opens contexts of its own, so files never share cookies or pages.
 */
export const connectBrowser = (): Promise<Browser> => chromium.connect(inject("chromiumEndpoint"))
