import axe from "axe-core"
import type { Browser, BrowserContext, Page } from "playwright-core"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Fixture } from "@opsplatform/testing"
import { connectBrowser } from "@opsplatform/testing/browser"
import { testDatabases } from "./support/databases.ts"
import { type Receiver, startReceiver } from "./support/receiver.ts"
import { call, seedFixture, shiftedClock, startTestServer, type TestServer } from "./support/server.ts"
import { useTestWebhookSettings } from "./support/webhooks.ts"

/**
 * The webhook portal as the person receiving the webhooks uses it, in
 * headless Chromium with the pages' real policy and script: open the link the
 * API minted, add an endpoint pointing at a local receiver, send a test
 * event and see it delivered, make the receiver fail, see the failure and
 * replay it. Every page is scanned with axe-core (no serious or critical
 * violation). `UPDATE_SCREENSHOTS=1` rewrites the README's screenshots
 * (docs/images/portal-*.png).
 */

// Loopback receivers allowed, retries 200 ms apart: a delivery that keeps failing gives up within seconds.
useTestWebhookSettings({ stepMs: 200, timeoutMs: 1_500 })

const images = fileURLToPath(new URL("../../../docs/images/", import.meta.url))
const screenshotDir = process.env.UPDATE_SCREENSHOTS ? images : fs.mkdtempSync(path.join(os.tmpdir(), "portal-"))

/** axe-core's serious and critical violations on the page as it is now. */
const accessibilityIssues = async (page: Page) => {
  // Evaluated through the browser's protocol, not as a page script: the page's policy admits no script without its nonce.
  const result = await page.evaluate(`${axe.source}; axe.run(document, { resultTypes: ["violations"] })`) as axe.AxeResults
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`)
}

const db = testDatabases()[0]!

describe("the webhook portal in Chromium", () => {
  let server: TestServer
  let browser: Browser
  let receiver: Receiver
  let f: Fixture
  let other: Fixture
  const time = shiftedClock()
  const policyViolations: Array<string> = []

  beforeAll(async () => {
    server = await startTestServer(db.choice(), { background: true, clock: time.clock })
    f = await seedFixture(server, "Portal browser org")
    other = await seedFixture(server, "Portal other org")
    receiver = await startReceiver()
    browser = await connectBrowser()
  })
  afterAll(async () => {
    await browser?.close()
    await receiver?.close()
    await server?.close()
  })

  /** A link minted through the API with the fixture's sandbox key (plain http receivers are accepted in the sandbox). */
  const mint = async (token: string, body: unknown = {}) => {
    const res = await call(server, "POST", "/v1/webhooks/portal-sessions", { token, body })
    expect(res.status, res.text).toBe(201)
    return (res.json.data.url as string).replace(/^http:\/\/[^/]+/, server.url)
  }

  const newPage = async (options: { readonly locale?: string } = {}): Promise<{ context: BrowserContext; page: Page }> => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, locale: options.locale ?? "en-GB" })
    const page = await context.newPage()
    page.on("console", (m) => {
      if (/Content Security Policy|Refused to/.test(m.text())) policyViolations.push(m.text())
    })
    return { context, page }
  }

  const scanned = async (page: Page, name: string) => {
    expect(await accessibilityIssues(page), `${name}: axe-core`).toEqual([])
    await page.screenshot({ path: path.join(screenshotDir, `portal-${name}.png`), fullPage: false })
  }

  it("adds an endpoint, sends a test event and sees it delivered, then replays a failed delivery", async () => {
    const { context, page } = await newPage()
    page.on("dialog", (dialog) => void dialog.accept())
    await page.goto(await mint(f.tokens.sandbox))
    // The link is exchanged for a cookie and leaves the address bar.
    expect(new URL(page.url()).pathname).toBe("/portal/webhooks")
    expect(page.url()).not.toContain("token")
    await expect(page.getByRole("heading", { level: 1 })).toBeDefined()
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Your endpoints")
    await scanned(page, "endpoints-empty")

    await page.getByRole("link", { name: "Add an endpoint" }).click()
    await page.getByLabel("Endpoint URL").fill(receiver.url)
    await page.getByLabel("Description").fill("Our ERP")
    await page.getByRole("checkbox", { name: /fleet_vehicle\.created/ }).check()
    await scanned(page, "new-endpoint")
    await page.getByRole("button", { name: "Add endpoint" }).click()
    await page.getByText("Endpoint added.").waitFor()
    const secret = await page.locator("#secret-value").innerText()
    expect(secret).toMatch(/^whsec_/)
    receiver.secrets = [secret]

    await page.getByRole("button", { name: "Send a test event" }).click()
    const payload = JSON.parse(await page.locator("section[aria-labelledby=test-title] pre").innerText())
    expect(payload).toMatchObject({ type: "webhook.test", environment: "sandbox", data: { organizationId: f.organizationId } })
    // The log refreshes itself while the delivery is in flight.
    await page.locator("#log .status-succeeded").first().waitFor({ timeout: 20_000 })
    expect(receiver.received.map((r) => JSON.parse(r.body).id)).toContain(payload.id)
    expect(receiver.rejected).toEqual([])
    await scanned(page, "endpoint")

    await page.locator("#log table a").first().click()
    await page.getByRole("heading", { name: "Delivery of webhook.test" }).waitFor()
    expect(await page.locator("table.attempts tbody tr").first().locator("td").nth(2).innerText()).toBe("204")
    await scanned(page, "delivery-succeeded")

    // An endpoint that fails: every attempt is answered 500 until the delivery gives up.
    receiver.answer = () => ({ status: 500, body: "database is down" })
    await page.getByRole("link", { name: "Back to the endpoint" }).click()
    await page.getByRole("button", { name: "Send a test event" }).click()
    await page.locator("#log .status-dead").first().waitFor({ timeout: 30_000 })
    await page.locator("#log tr:has(.status-dead) a").first().click()
    await page.getByText("Failed, gave up").waitFor()
    const attempts = page.locator("table.attempts tbody tr")
    expect(await attempts.count()).toBe(8)
    expect(await attempts.first().locator("td").nth(2).innerText()).toBe("500")
    expect(await attempts.first().locator("td").nth(4).innerText()).toContain("database is down")
    await scanned(page, "delivery-failed")

    // The endpoint recovers: replay.
    receiver.answer = () => ({ status: 200, body: "ok" })
    await page.getByRole("button", { name: "Send again", exact: true }).click()
    await page.getByText("Queued to be sent again now.").waitFor()
    await expect.poll(async () => {
      await page.reload()
      return page.locator(".status-succeeded").count()
    }, { timeout: 20_000 }).toBeGreaterThan(0)
    expect(await attempts.first().locator("td").nth(2).innerText()).toBe("200")

    // Force-redeliver a succeeded one, after the confirmation the script asks for.
    await page.getByRole("button", { name: "Send again anyway" }).click()
    await page.getByText("Queued to be sent again now.").waitFor()
    expect(receiver.rejected).toEqual([])
    await context.close()
  }, 180_000)

  it("shows the event catalog with each type's schema and example", async () => {
    const { context, page } = await newPage()
    await page.goto(await mint(f.tokens.sandbox))
    await page.getByRole("link", { name: "Event catalog" }).click()
    await page.getByRole("heading", { name: "invoice.paid" }).waitFor()
    expect(await page.locator("section.event-type").count()).toBe(11)
    const example = JSON.parse(await page.locator("#invoice\\.paid pre.example").innerText())
    expect(example.type).toBe("invoice.paid")
    await page.locator("#invoice\\.paid summary").click()
    const schema = JSON.parse(await page.locator("#invoice\\.paid pre.schema").innerText())
    expect(schema.title).toBe("invoice.paid")
    await scanned(page, "catalog")
    await context.close()
  })

  it("speaks Romanian to a Romanian browser, with no accessibility issue either", async () => {
    const { context, page } = await newPage({ locale: "ro-RO" })
    await page.goto(await mint(f.tokens.sandbox))
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Adresele dumneavoastră")
    expect(await page.locator("html").getAttribute("lang")).toBe("ro")
    await scanned(page, "endpoints-ro")
    await page.getByRole("link", { name: "English" }).click()
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Your endpoints")
    await context.close()
  })

  it("refuses a link opened a second time, and an expired one", async () => {
    const link = await mint(f.tokens.sandbox)
    const first = await newPage()
    await first.page.goto(link)
    expect(new URL(first.page.url()).pathname).toBe("/portal/webhooks")
    const second = await newPage()
    const response = await second.page.goto(link)
    expect(response?.status()).toBe(410)
    await second.page.getByText("This link was already used").waitFor()
    expect(await second.page.locator("nav").count()).toBe(0)
    await scanned(second.page, "link-used")
    const expiring = await mint(f.tokens.sandbox, { expires_in_seconds: 60 })
    time.advance(61_000)
    const late = await second.page.goto(expiring)
    expect(late?.status()).toBe(410)
    await second.page.getByText("This link has expired").waitFor()
    await first.context.close()
    await second.context.close()
  })

  it("never shows one organization's subscriptions to another's session", async () => {
    const mine = await call(server, "GET", "/v1/webhooks?perPage=100", { token: f.tokens.sandbox })
    const { id, url } = mine.json.data[0] as { id: string; url: string }
    const { context, page } = await newPage()
    await page.goto(await mint(other.tokens.sandbox))
    expect(await page.locator("main").innerText()).not.toContain(url)
    expect(await page.getByText("No endpoints yet").count()).toBe(1)
    const response = await page.goto(`${server.url}/portal/webhooks/${id}`)
    expect(response?.status()).toBe(404)
    expect(await page.locator("main").innerText()).not.toContain(url)
    await context.close()
  })

  it("runs without a single Content-Security-Policy violation", () => {
    expect(policyViolations).toEqual([])
  })
})
