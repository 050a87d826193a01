import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Fixture } from "@opsplatform/testing"
import { testDatabases } from "./support/databases.ts"
import { call, seedFixture, shiftedClock, startTestServer, type TestServer } from "./support/server.ts"

/**
 * The webhook portal over HTTP, without a browser: sessions minted by the
 * API, the one-time link, the cookie, the page headers (CSP, framing,
 * Referer), CSRF, read-only and type-limited sessions, revocation, and
 * tenancy. The browser test (portal.browser.test.ts) drives the same pages
 * as a person does.
 */

const hook = "https://hooks.example.com/portal"

interface Browserish {
  cookie: string
}

for (const db of testDatabases()) {
  describe(`the webhook portal over HTTP (${db.name})`, () => {
    let server: TestServer
    let f: Fixture
    let other: Fixture
    const time = shiftedClock()

    beforeAll(async () => {
      server = await startTestServer(db.choice(), { clock: time.clock })
      f = await seedFixture(server, "Portal org")
      other = await seedFixture(server, "Other org")
    })
    afterAll(() => server?.close())

    const mint = async (body: unknown = {}, token = f.tokens.api) => {
      const res = await call(server, "POST", "/v1/webhooks/portal-sessions", { token, body })
      expect(res.status, res.text).toBe(201)
      return res.json.data as { id: string; url: string; expires_at: string; read_only: boolean }
    }

    /** Opens a link as a browser would, without following the redirect; the cookie it sets. */
    const open = async (url: string) => {
      const response = await fetch(url, { redirect: "manual" })
      return { response, text: await response.text(), cookie: response.headers.get("set-cookie") ?? "" }
    }

    const enter = async (body: unknown = {}, token = f.tokens.api): Promise<Browserish> => {
      const { cookie, response } = await open((await mint(body, token)).url.replace(/^http:\/\/[^/]+/, server.url))
      expect(response.status).toBe(303)
      return { cookie: cookie.split(";")[0]! }
    }

    const get = async (b: Browserish, path: string, headers: Record<string, string> = {}) => {
      const response = await fetch(`${server.url}${path}`, { headers: { cookie: b.cookie, ...headers }, redirect: "manual" })
      return { response, text: await response.text() }
    }

    const post = async (b: Browserish, path: string, fields: ReadonlyArray<readonly [string, string]>) => {
      const response = await fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { cookie: b.cookie, "content-type": "application/x-www-form-urlencoded", origin: "null" },
        body: new URLSearchParams(fields.map(([k, v]) => [k, v])).toString(),
        redirect: "manual"
      })
      return { response, text: await response.text() }
    }

    const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? ""

    it("mints a one-time link for the caller's organization environment, one hour by default and at most 24", async () => {
      const session = await mint()
      expect(session.url).toMatch(/\/portal\/enter\?token=svc_pl_[A-Za-z0-9_-]{43}$/)
      expect(Date.parse(session.expires_at) - Date.now()).toBeGreaterThan(3500_000)
      expect(Date.parse(session.expires_at) - Date.now()).toBeLessThan(3700_000)
      expect(session.read_only).toBe(false)
      const tooLong = await call(server, "POST", "/v1/webhooks/portal-sessions", { token: f.tokens.api, body: { expires_in_seconds: 86_401 } })
      expect(tooLong.status).toBe(400)
      expect(tooLong.json.error.details[0].field).toBe("expires_in_seconds")
      const badOrigin = await call(server, "POST", "/v1/webhooks/portal-sessions", {
        token: f.tokens.api,
        body: { frame_ancestors: ["https://app.example.com; script-src *"] }
      })
      expect(badOrigin.status).toBe(400)
      const badColour = await call(server, "POST", "/v1/webhooks/portal-sessions", { token: f.tokens.api, body: { theme: { accent_color: "red;}" } } })
      expect(badColour.status).toBe(400)
      const readOnlyKey = await call(server, "POST", "/v1/webhooks/portal-sessions", { token: f.tokens.narrow, body: {} })
      expect(readOnlyKey.status).toBe(403)
    })

    it("opens once: the link becomes an HttpOnly SameSite cookie and leaves the address bar, without a Referer", async () => {
      const session = await mint()
      const url = session.url.replace(/^http:\/\/[^/]+/, server.url)
      const first = await open(url)
      expect(first.response.status).toBe(303)
      expect(first.response.headers.get("location")).toBe("/portal/webhooks")
      expect(first.response.headers.get("referrer-policy")).toBe("no-referrer")
      expect(first.cookie).toMatch(/^opsplatform_portal=svc_ps_[A-Za-z0-9_-]{43};/)
      expect(first.cookie).toContain("HttpOnly")
      expect(first.cookie).toContain("SameSite=Lax")
      expect(first.cookie).toContain("Path=/portal")
      const again = await open(url)
      expect(again.response.status).toBe(410)
      expect(again.text).toContain("already used")
      expect(again.response.headers.get("set-cookie")).toBeNull()
      const unknown = await open(`${server.url}/portal/enter?token=svc_pl_${"A".repeat(43)}`)
      expect(unknown.response.status).toBe(404)
      expect(unknown.text).toContain("not valid")
    })

    it("refuses an expired link with a page that says so", async () => {
      const session = await mint({ expires_in_seconds: 60 })
      time.advance(61_000)
      const late = await open(session.url.replace(/^http:\/\/[^/]+/, server.url))
      expect(late.response.status).toBe(410)
      expect(late.text).toContain("expired")
    })

    it("serves pages under a strict policy: nonces, no unsafe-inline, no framing, no Referer, never cached", async () => {
      const b = await enter()
      const { response, text } = await get(b, "/portal/webhooks")
      expect(response.status).toBe(200)
      const csp = response.headers.get("content-security-policy")!
      const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1]
      expect(nonce).toBeDefined()
      expect(csp).not.toContain("unsafe-inline")
      expect(csp).toContain("frame-ancestors 'none'")
      expect(csp).toContain("default-src 'none'")
      expect(text).toContain(`<style nonce="${nonce}">`)
      expect(text).toContain(`<script type="module" src="/portal/assets/portal.js" nonce="${nonce}">`)
      expect(response.headers.get("x-frame-options")).toBe("DENY")
      expect(response.headers.get("referrer-policy")).toBe("no-referrer")
      expect(response.headers.get("cache-control")).toBe("no-store")
      // Another response, another nonce.
      const again = await get(b, "/portal/webhooks")
      expect(again.response.headers.get("content-security-policy")).not.toContain(nonce)
      const script = await fetch(`${server.url}/portal/assets/portal.js`)
      expect(script.status).toBe(200)
      expect(script.headers.get("content-type")).toContain("javascript")
    })

    it("names the session's framing origins and themes the page through CSS variables", async () => {
      const session = await mint({
        frame_ancestors: ["https://app.example.com", "http://localhost:3000"],
        theme: { accent_color: "#ffcc00", font_family: "Inter, system-ui", color_scheme: "dark" }
      })
      const opened = await open(session.url.replace(/^http:\/\/[^/]+/, server.url))
      expect(opened.cookie).toContain("SameSite=None")
      expect(opened.cookie).toContain("Secure")
      const { response, text } = await get({ cookie: opened.cookie.split(";")[0]! }, "/portal/webhooks")
      expect(response.headers.get("content-security-policy")).toContain("frame-ancestors https://app.example.com http://localhost:3000")
      expect(response.headers.get("x-frame-options")).toBeNull()
      expect(text).toContain(`data-scheme="dark"`)
      expect(text).toContain("--accent:#ffcc00;--on-accent:#000")
      expect(text).toContain("--font:Inter, system-ui")
    })

    it("changes nothing without the session's CSRF token, even from the same origin", async () => {
      const b = await enter()
      const refused = await post(b, "/portal/webhooks", [["url", hook], ["event_types", "invoice.paid"]])
      expect(refused.response.status).toBe(403)
      const forged = await post(b, "/portal/webhooks", [["url", hook], ["event_types", "invoice.paid"], ["csrf", "x".repeat(43)]])
      expect(forged.response.status).toBe(403)
      const list = await call(server, "GET", "/v1/webhooks?perPage=100", { token: f.tokens.api })
      expect(list.json.data.filter((s: { url: string }) => s.url === hook)).toEqual([])
    })

    it("creates through the API's rules: the same validation, the secret shown, the refusal in words", async () => {
      const b = await enter()
      const csrf = csrfOf((await get(b, "/portal/webhooks/new")).text)
      const privateUrl = await post(b, "/portal/webhooks", [["csrf", csrf], ["url", "https://127.0.0.1/hook"], ["event_types", "invoice.paid"]])
      expect(privateUrl.response.status).toBe(400)
      expect(privateUrl.text).toContain("private or local network")
      const noTypes = await post(b, "/portal/webhooks", [["csrf", csrf], ["url", hook]])
      expect(noTypes.response.status).toBe(400)
      expect(noTypes.text).toContain("Pick at least one event")
      const created = await post(b, "/portal/webhooks", [
        ["csrf", csrf],
        ["url", hook],
        ["description", "From the portal"],
        ["event_types", "invoice.paid"],
        ["event_types", "fleet_vehicle.created"]
      ])
      expect(created.response.status).toBe(201)
      expect(created.text).toMatch(/whsec_[A-Za-z0-9+/]{43}=/)
      const list = await call(server, "GET", "/v1/webhooks?perPage=100", { token: f.tokens.api })
      const made = list.json.data.find((s: { description: string | null }) => s.description === "From the portal")
      expect(made).toMatchObject({ url: hook, event_types: ["invoice.paid", "fleet_vehicle.created"] })
      const secret = await call(server, "GET", `/v1/webhooks/${made.id}/secret`, { token: f.tokens.api })
      expect(created.text).toContain(secret.json.data.secret)
    })

    it("never shows another organization's subscriptions, nor the other environment's", async () => {
      const theirs = await call(server, "POST", "/v1/webhooks", { token: other.tokens.api, body: { url: `${hook}/theirs`, event_types: ["invoice.paid"] } })
      const sandbox = await call(server, "POST", "/v1/webhooks", { token: f.tokens.sandbox, body: { url: `${hook}/sandbox`, event_types: ["invoice.paid"] } })
      const b = await enter()
      const list = await get(b, "/portal/webhooks")
      expect(list.text).not.toContain(`${hook}/theirs`)
      expect(list.text).not.toContain(`${hook}/sandbox`)
      for (const id of [theirs.json.data.id, sandbox.json.data.id]) {
        const page = await get(b, `/portal/webhooks/${id}`)
        expect(page.response.status).toBe(404)
        expect(page.text).not.toContain(hook)
        const csrf = csrfOf(list.text)
        const removed = await post(b, `/portal/webhooks/${id}/delete`, [["csrf", csrf], ["confirmed", "yes"]])
        expect(removed.response.status).toBe(404)
      }
      expect((await call(server, "GET", `/v1/webhooks/${theirs.json.data.id}`, { token: other.tokens.api })).status).toBe(200)
    })

    it("a read-only session shows everything and changes nothing", async () => {
      const mine = await call(server, "POST", "/v1/webhooks", { token: f.tokens.api, body: { url: `${hook}/ro`, event_types: ["invoice.paid"] } })
      const b = await enter({ read_only: true })
      const list = await get(b, "/portal/webhooks")
      expect(list.text).toContain(`${hook}/ro`)
      expect(list.text).not.toContain("/portal/webhooks/new")
      const page = await get(b, `/portal/webhooks/${mine.json.data.id}`)
      expect(page.text).not.toContain("/disable")
      const refused = await post(b, `/portal/webhooks/${mine.json.data.id}/disable`, [["csrf", csrfOf(list.text)]])
      expect(refused.response.status).toBe(403)
      expect((await call(server, "GET", `/v1/webhooks/${mine.json.data.id}`, { token: f.tokens.api })).json.data.enabled).toBe(true)
    })

    it("a session limited to some event types offers only those", async () => {
      const b = await enter({ event_types: ["fleet_vehicle.created"] })
      const catalog = await get(b, "/portal/events")
      expect(catalog.text).toContain("fleet_vehicle.created")
      expect(catalog.text).not.toContain("invoice.paid")
      const csrf = csrfOf(catalog.text)
      const refused = await post(b, "/portal/webhooks", [["csrf", csrf], ["url", `${hook}/limited`], ["event_types", "invoice.paid"]])
      expect(refused.response.status).toBe(400)
      expect(refused.text).toContain("Pick events from the list only")
    })

    it("revoking a session signs its browser out and withdraws its link; sign-out ends it too", async () => {
      const session = await mint()
      const url = session.url.replace(/^http:\/\/[^/]+/, server.url)
      const revokedEarly = await mint()
      expect((await call(server, "DELETE", `/v1/webhooks/portal-sessions/${revokedEarly.id}`, { token: f.tokens.api })).status).toBe(200)
      const withdrawn = await open(revokedEarly.url.replace(/^http:\/\/[^/]+/, server.url))
      expect(withdrawn.response.status).toBe(410)
      expect(withdrawn.text).toContain("withdrawn")
      const b = { cookie: (await open(url)).cookie.split(";")[0]! }
      expect((await get(b, "/portal/webhooks")).response.status).toBe(200)
      expect((await call(server, "DELETE", `/v1/webhooks/portal-sessions/${session.id}`, { token: other.tokens.api })).status).toBe(404)
      expect((await call(server, "DELETE", `/v1/webhooks/portal-sessions/${session.id}`, { token: f.tokens.api })).status).toBe(200)
      const ended = await get(b, "/portal/webhooks")
      expect(ended.response.status).toBe(401)
      expect(ended.text).toContain("session has ended")
      const c = await enter()
      const page = await get(c, "/portal/webhooks")
      const out = await post(c, "/portal/sign-out", [["csrf", csrfOf(page.text)]])
      expect(out.response.status).toBe(200)
      expect(out.response.headers.get("set-cookie")).toContain("opsplatform_portal=;")
      expect((await get(c, "/portal/webhooks")).response.status).toBe(401)
    })

    it("speaks Romanian to a Romanian browser, and keeps the reader's choice", async () => {
      const b = await enter()
      const ro = await get(b, "/portal/webhooks", { "accept-language": "ro-RO,ro;q=0.9,en;q=0.8" })
      expect(ro.text).toContain(`<html lang="ro"`)
      expect(ro.text).toContain("Adresele dumneavoastră")
      const chosen = await get(b, "/portal/webhooks?lang=en", { "accept-language": "ro" })
      expect(chosen.text).toContain(`<html lang="en"`)
      expect(chosen.response.headers.get("set-cookie")).toContain("opsplatform_lang=en")
      const kept = await get({ cookie: `${b.cookie}; opsplatform_lang=en` }, "/portal/webhooks", { "accept-language": "ro" })
      expect(kept.text).toContain("Your endpoints")
    })

    it("serves each event type's JSON Schema and example in GET /v1/webhooks/events", async () => {
      const res = await call(server, "GET", "/v1/webhooks/events", { token: f.tokens.api })
      const paid = res.json.data.find((t: { type: string }) => t.type === "invoice.paid")
      expect(paid.schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema")
      expect(paid.schema.properties.type).toEqual({ type: "string", enum: ["invoice.paid"] })
      expect(paid.example.type).toBe("invoice.paid")
      expect(paid.example.data.organizationId).toBeDefined()
    })
  })
}
