import type { Browser, Page } from "playwright-core"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { connectBrowser } from "@opsplatform/testing/browser"
import { testDatabases } from "./support/databases.ts"
import { startTestServer, type TestServer } from "./support/server.ts"

/**
 * The docs page as a reader sees it, in headless Chromium: every operation of
 * the served OpenAPI document is on the page with its method, path, scope and
 * every response it declares, errors included. Operations added later are
 * covered without touching this test. `UPDATE_SCREENSHOTS=1` rewrites the
 * screenshot the README shows (docs/images/api-docs.png).
 */

interface Operation {
  readonly id: string
  readonly method: string
  readonly path: string
  readonly scope: string
  readonly responses: Record<string, { readonly description: string }>
}

const screenshot = fileURLToPath(new URL("../../../docs/images/api-docs.png", import.meta.url))

describe("GET /docs in Chromium", () => {
  let server: TestServer
  let browser: Browser
  let page: Page
  let operations: Array<Operation>

  beforeAll(async () => {
    server = await startTestServer(testDatabases()[0]!.choice())
    const document = await (await fetch(`${server.url}/v1/openapi.json`)).json() as {
      paths: Record<string, Record<string, { operationId: string; tags: Array<string>; "x-required-scope": string; responses: Operation["responses"] }>>
    }
    operations = Object.entries(document.paths).flatMap(([p, item]) =>
      Object.entries(item).map(([method, op]) => ({
        id: op.operationId,
        method,
        path: p,
        scope: op["x-required-scope"],
        responses: op.responses
      })))
    browser = await connectBrowser()
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage()
    await page.goto(`${server.url}/docs`)
    await page.waitForSelector(".operation")
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  it("lists every operation of the document, and nothing else", async () => {
    expect(operations.length).toBeGreaterThan(50)
    const shown = await page.$$eval(".operation", (sections) => sections.map((s) => s.id))
    expect(shown.sort()).toEqual(operations.map((o) => o.id).sort())
  })

  it("shows each operation's method, path, scope and every response it declares, errors included", async () => {
    const shown = new Map(
      (await page.$$eval(".operation", (sections) =>
        sections.map((section) => ({
          id: section.id,
          heading: (section.querySelector("h3") as HTMLElement).innerText,
          scope: (section.querySelector(".scope") as HTMLElement).innerText,
          visible: (section as HTMLElement).offsetHeight > 0,
          responses: [...section.querySelectorAll("table.responses tr.response")].map((tr) => ({
            status: tr.getAttribute("data-status")!,
            text: (tr.children[1] as HTMLElement).innerText
          }))
        })))).map((s) => [s.id, s] as const)
    )
    for (const op of operations) {
      const section = shown.get(op.id)!
      expect(section.visible, op.id).toBe(true)
      expect(section.heading, op.id).toBe(`${op.method.toUpperCase()} ${op.path}`)
      expect(section.scope, op.id).toBe(`Scope: ${op.scope}`)
      expect(section.responses.map((r) => r.status), op.id).toEqual(Object.keys(op.responses))
      expect(Object.keys(op.responses).filter((s) => Number(s) >= 400).length, `${op.id} declares its errors`).toBeGreaterThanOrEqual(3)
      for (const row of section.responses) {
        // Descriptions mark code with backticks; the page shows it as code, without them.
        expect(row.text, `${op.id} ${row.status}`).toBe(op.responses[row.status]!.description.replace(/`/g, ""))
      }
    }
  })

  it("links the OpenAPI document and Swagger UI, which still serves", async () => {
    expect(await page.getAttribute("a[href='/v1/openapi.json']", "href")).toBe("/v1/openapi.json")
    const swagger = await fetch(`${server.url}/docs/swagger`)
    expect(swagger.status).toBe(200)
    expect(await swagger.text()).toContain("SwaggerUIBundle")
  })

  it("renders as a person sees it (the README's screenshot)", async () => {
    const target = process.env.UPDATE_SCREENSHOTS ? screenshot : path.join(fs.mkdtempSync(path.join(os.tmpdir(), "docs-")), "api-docs.png")
    await page.evaluate(() => window.scrollTo(0, 0))
    const png = await page.screenshot({ path: target })
    expect(png.subarray(1, 4).toString()).toBe("PNG")
    expect(png.length).toBeGreaterThan(20_000)
    expect(fs.existsSync(screenshot), "docs/images/api-docs.png is committed").toBe(true)
  })
})
