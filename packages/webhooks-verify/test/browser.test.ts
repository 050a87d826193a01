import { existsSync, readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { extname, join, normalize } from "node:path"
import { fileURLToPath } from "node:url"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { connectBrowser } from "@opsplatform/testing/browser"
import * as Node from "../src/node.ts"
import { body, ed25519Headers, event, eventId, publicKey, secret } from "./support.ts"

/**
 * The built ESM entry for browsers, loaded by headless Chromium from a
 * loopback server, verifying on the page's own Web Crypto.
 */

const dist = fileURLToPath(new URL("../dist/esm/", import.meta.url))

let server: Server
let origin: string
let browser: Browser
let tab: Page
const served: Array<string> = []

/** The page loads the package the way an app would, and hands it to the test as `globalThis.webhooks`. */
const page = `<!doctype html><title>verify</title>
<script type="module">
import * as webhooks from "/esm/index.js"
globalThis.webhooks = webhooks
</script>`

beforeAll(async () => {
  if (!existsSync(join(dist, "index.js"))) throw new Error(`${dist}index.js is missing: build the package first`)
  server = createServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://localhost").pathname
    served.push(path)
    if (path === "/") {
      response.writeHead(200, { "content-type": "text/html" }).end(page)
      return
    }
    const file = normalize(join(dist, path.replace(/^\/esm\//, "")))
    if (!path.startsWith("/esm/") || !file.startsWith(dist) || extname(file) !== ".js" || !existsSync(file)) {
      response.writeHead(404).end()
      return
    }
    response.writeHead(200, { "content-type": "text/javascript" }).end(readFileSync(file))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  browser = await connectBrowser()
  tab = await browser.newPage()
  // Counts Web Crypto HMACs, so the test knows which path ran.
  await tab.addInitScript(() => {
    const subtle = globalThis.crypto.subtle
    const sign = subtle.sign.bind(subtle)
    const counter = globalThis as unknown as { subtleSignCalls: number }
    counter.subtleSignCalls = 0
    subtle.sign = (...args: Parameters<SubtleCrypto["sign"]>) => {
      counter.subtleSignCalls++
      return sign(...args)
    }
  })
  await tab.goto(`${origin}/`)
  await tab.waitForFunction(() => "webhooks" in globalThis)
})

afterAll(async () => {
  await browser?.close()
  await new Promise((resolve) => server?.close(resolve))
})

interface PageResult {
  readonly ok: boolean
  readonly value?: unknown
  readonly name?: string
  readonly code?: string
  readonly subtleSignCalls: number
}

/** Runs `createVerifier(key)[method](payload, headers)` in the page, the payload given as a string or byte values. */
const verifyInPage = (
  method: "verifyAsync" | "verify" | "verifyRequest",
  payload: string | Array<number>,
  headers: Record<string, string>,
  key: string = secret
): Promise<PageResult> =>
  tab.evaluate(async ({ method, payload, headers, secret }) => {
    const api = (globalThis as unknown as { webhooks: typeof Node }).webhooks
    const counter = globalThis as unknown as { subtleSignCalls: number }
    const before = counter.subtleSignCalls
    const raw = typeof payload === "string" ? payload : new Uint8Array(payload)
    const verifier = api.createVerifier(secret)
    try {
      const value = method === "verifyRequest"
        ? await verifier.verifyRequest(new Request(location.href, { method: "POST", body: raw, headers: new Headers(headers) }))
        : await verifier[method](raw, headers)
      return { ok: true, value, subtleSignCalls: counter.subtleSignCalls - before }
    } catch (error) {
      const e = error as { name: string; code: string }
      return { ok: false, name: e.name, code: e.code, subtleSignCalls: counter.subtleSignCalls - before }
    }
  }, { method, payload, headers, secret: key })

const signedNow = (payload: string | Uint8Array, offsetSeconds = 0) =>
  Node.sign(secret, { id: eventId, payload, timestamp: Math.floor(Date.now() / 1000) + offsetSeconds })

describe("in headless Chromium", () => {
  it("verifies a valid delivery on Web Crypto", async () => {
    const result = await verifyInPage("verifyAsync", body, { ...signedNow(body) })
    expect(result).toMatchObject({ ok: true, value: { id: eventId, event } })
    expect(result.subtleSignCalls).toBe(1)
    expect(served).toContain("/esm/index.js")
  })

  it("refuses a tampered body with no_matching_signature", async () => {
    const result = await verifyInPage("verifyAsync", body.replace("12", "13"), { ...signedNow(body) })
    expect(result).toMatchObject({ ok: false, name: "WebhookVerificationError", code: "no_matching_signature" })
    expect(result.subtleSignCalls).toBe(1)
  })

  it("refuses a stale delivery before hashing anything", async () => {
    const result = await verifyInPage("verifyAsync", body, { ...signedNow(body, -301) })
    expect(result).toMatchObject({ ok: false, code: "timestamp_too_old", subtleSignCalls: 0 })
  })

  it("verifies a Fetch Request and a body that is not UTF-8", async () => {
    const bytes = new Uint8Array([...new TextEncoder().encode(body.slice(0, -2)), ...new TextEncoder().encode(`,"n":"`), 0xe9, 0xff, ...new TextEncoder().encode(`"}}`)])
    const result = await verifyInPage("verifyRequest", [...bytes], { ...signedNow(bytes) })
    expect(result).toMatchObject({ ok: true, value: { id: eventId, event: { data: { n: "\uFFFD\uFFFD" } } } })
    const tampered = await verifyInPage("verifyRequest", [...bytes.slice(1)], { ...signedNow(bytes) })
    expect(tampered).toMatchObject({ ok: false, code: "no_matching_signature" })
  })

  it("verifies synchronously in plain JavaScript, without Web Crypto", async () => {
    const result = await verifyInPage("verify", body, { ...signedNow(body) })
    expect(result).toMatchObject({ ok: true, value: { id: eventId, event }, subtleSignCalls: 0 })
  })

  it("verifies v1a with a whpk_ public key on the page's Web Crypto Ed25519, asynchronously only", async () => {
    const at = Math.floor(Date.now() / 1000)
    const headers = ed25519Headers({ timestamp: at })
    expect(await verifyInPage("verifyAsync", body, headers, publicKey)).toMatchObject({ ok: true, value: { id: eventId, event } })
    expect(await verifyInPage("verifyRequest", body, headers, publicKey)).toMatchObject({ ok: true, value: { id: eventId } })
    const tampered = await verifyInPage("verifyAsync", body.replace("12", "13"), headers, publicKey)
    expect(tampered).toMatchObject({ ok: false, name: "WebhookVerificationError", code: "no_matching_signature" })
    expect(await verifyInPage("verify", body, headers, publicKey)).toMatchObject({ ok: false, name: "TypeError" })
  })

  it("signs in the page what Node verifies", async () => {
    const timestamp = Math.floor(Date.now() / 1000)
    const headers = await tab.evaluate(({ secret, id, body, timestamp }) => {
      const api = (globalThis as unknown as { webhooks: typeof Node }).webhooks
      return api.sign(secret, { id, payload: body, timestamp })
    }, { secret, id: eventId, body, timestamp })
    expect(headers).toEqual(Node.sign(secret, { id: eventId, payload: body, timestamp }))
    expect(Node.createVerifier(secret).verify(body, headers).event).toEqual(event)
  })
})
