import { createClient } from "@opsplatform/client"
import { type Fixture, freePort, type Process, type RunningServer, start, startServer } from "@opsplatform/example-support"
import { connectBrowser } from "@opsplatform/testing/browser"
import type { Browser } from "playwright-core"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, expect, it } from "vitest"

/**
 * The app as a member uses it, in headless Chromium: connect, sign in and
 * approve on the platform's consent page, come back connected; then a
 * refresh. The app runs as `npm start` runs it, against a running server.
 */
const exampleDir = fileURLToPath(new URL("..", import.meta.url))

let server: RunningServer
let f: Fixture
let app: Process
let appUrl: string
let browser: Browser

beforeAll(async () => {
  server = await startServer({ background: false })
  f = await server.seed("Acme Dispatch")
  const ops = createClient({ baseUrl: server.url, token: f.tokens.api })
  await ops.post("/v1/locations", { body: { name: "North depot" } })
  // The app, registered by the organization (an operator would use `opsplatform admin create-app`).
  const registered = await ops.post("/v1/apps", {
    body: {
      name: "Dispatch board",
      type: "confidential",
      redirect_uris: ["http://127.0.0.1/callback"],
      scopes: ["organization:read", "locations:read"],
      grant_types: ["authorization_code", "refresh_token"]
    }
  })
  const port = await freePort()
  appUrl = `http://127.0.0.1:${port}`
  app = start(process.execPath, ["src/app.ts"], {
    cwd: exampleDir,
    env: { OPSPLATFORM_URL: server.url, CLIENT_ID: registered.client_id, CLIENT_SECRET: registered.client_secret!, PORT: String(port) }
  })
  await app.waitFor(/^app on /)
  browser = await connectBrowser()
})
afterAll(async () => {
  await browser?.close()
  await app?.stop()
  await server?.close()
})

it("connects with the authorization code and PKCE, the consent clicked in Chromium, then refreshes", async () => {
  const page = await (await browser.newContext()).newPage()
  await page.goto(appUrl)
  await page.click("#connect")
  // The platform's sign-in page, then its consent page.
  await page.waitForSelector("#password")
  expect(page.url().startsWith(`${server.url}/api/oauth/`)).toBe(true)
  await page.fill("#email", `member-${f.organizationId}@example.test`)
  await page.fill("#password", "correct horse battery staple")
  await page.click("button.primary")
  await page.waitForSelector("button[value=approve]")
  expect(await page.textContent("h1")).toContain("Dispatch board wants access")
  await page.check("input[name=environment][value=live]")
  await Promise.all([page.waitForURL((url) => url.href.startsWith(`${appUrl}/callback?code=`)), page.click("button[value=approve]")])

  expect(await page.textContent("h1")).toBe("Connected")
  expect(await page.textContent("#organization")).toBe("Acme Dispatch")
  expect(await page.$$eval("#locations li", (lis) => lis.map((li) => li.textContent))).toEqual(["North depot"])
  expect(await app.waitFor(/^Connected:/)).toBe("Connected: Acme Dispatch, 1 locations")

  await page.click("text=Refresh the token")
  await page.waitForSelector("h1:text('Refreshed')")
  expect(await page.$$eval("#locations li", (lis) => lis.map((li) => li.textContent))).toEqual(["North depot"])
})
