import { build, type Metafile } from "esbuild"
import type { Browser } from "playwright-core"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Fixture } from "@opsplatform/testing"
import { connectBrowser } from "@opsplatform/testing/browser"
import { assertBuilt } from "./support/cli.ts"
import { testDatabases } from "./support/databases.ts"
import { seedFixture, startTestServer, type TestServer } from "./support/server.ts"

/**
 * The `api` subpath is the contract without the server: bundled for the
 * browser from the published build (where any Node-only import fails the
 * bundle), it runs in Chromium and calls the real server.
 */

const root = fileURLToPath(new URL("..", import.meta.url))

const entry = `
import { Effect } from "effect"
import { FetchHttpClient } from "effect/http"
import { makeClient, NotFoundError } from "@opsplatform/http-node/api"

globalThis.runClient = (baseUrl, token) => Effect.runPromise(Effect.gen(function*() {
  const client = yield* makeClient({ baseUrl, token })
  const created = yield* client.locations.create({ payload: { name: "From the browser" } })
  const missing = yield* Effect.flip(client.locations.get({ params: { id: "00000000-0000-7000-8000-000000000000" } }))
  const list = yield* client.locations.list({ query: {} })
  return {
    created: created.data.name,
    missing: missing instanceof NotFoundError ? missing.error.code : String(missing),
    listed: list.data.map((l) => l.name)
  }
}).pipe(Effect.provide(FetchHttpClient.layer)))
`

describe("@opsplatform/http-node/api in a browser", () => {
  let bundle: string
  let metafile: Metafile
  let server: TestServer
  let browser: Browser
  let f: Fixture

  beforeAll(async () => {
    assertBuilt()
    const result = await build({
      stdin: { contents: entry, resolveDir: root, loader: "js" },
      absWorkingDir: root,
      bundle: true,
      platform: "browser",
      format: "esm",
      write: false,
      metafile: true,
      logLevel: "silent"
    })
    bundle = result.outputFiles[0]!.text
    metafile = result.metafile
    server = await startTestServer(testDatabases()[0]!.choice())
    f = await seedFixture(server, "Browser client org")
    browser = await connectBrowser()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  it("bundles for the browser from the build, without the server, the CLI or the database", () => {
    const inputs = Object.keys(metafile.inputs)
    // Paths are relative to this package.
    expect(inputs).toContain("dist/api/Api.js")
    expect(inputs.some((i) => i.startsWith("../core/dist/"))).toBe(true)
    expect(inputs.filter((i) => /^dist\/(server|cli|http|oauth)\/|pglite|sql-pg|platform-node|node:/.test(i))).toEqual([])
  })

  it("calls the real server from Chromium: typed results and typed errors", async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    // The page is served on the API's own origin, as an app hosted beside it would be.
    await page.route(`${server.url}/client.html`, (route) =>
      route.fulfill({ contentType: "text/html", body: `<!doctype html><script type="module">${bundle.replace(/<\/script/g, "<\\/script")}</script>` }))
    await page.goto(`${server.url}/client.html`)
    await page.waitForFunction(() => typeof (globalThis as { runClient?: unknown }).runClient === "function")
    const result = await page.evaluate(
      ({ url, token }) => (globalThis as unknown as { runClient: (u: string, t: string) => Promise<unknown> }).runClient(url, token),
      { url: server.url, token: f.tokens.api }
    )
    expect(result).toEqual({ created: "From the browser", missing: "not_found", listed: ["From the browser"] })
    await context.close()
  })
})
