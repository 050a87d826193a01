import { Effect } from "effect"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Scopes, Tenancy } from "@opsplatform/core"
import type { Fixture } from "@opsplatform/testing"
import { connectBrowser } from "@opsplatform/testing/browser"
import { testDatabases } from "../support/databases.ts"
import { call, seedFixture, startTestServer, type TestServer } from "../support/server.ts"
import { authorizeUrl, MEMBER_PASSWORD, memberEmail, pkce, postForm, registerApp, startCallbackReceiver } from "./support.ts"

/** The sign-in and consent pages in headless Chromium (Debian's), as a member uses them. */
describe("OAuth consent pages in Chromium", () => {
  let browser: Browser
  let receiver: Awaited<ReturnType<typeof startCallbackReceiver>>
  let CALLBACK: string
  const atCallback = (url: URL) => url.href.startsWith(CALLBACK)

  beforeAll(async () => {
    receiver = await startCallbackReceiver()
    CALLBACK = receiver.callback
    browser = await connectBrowser()
  })
  afterAll(async () => {
    await browser?.close()
    await receiver?.close()
  })

  for (const db of testDatabases()) {
    describe(db.name, () => {
      let server: TestServer
      let f: Fixture
      let second: { id: string; name: string }
      let app: Awaited<ReturnType<typeof registerApp>>

      beforeAll(async () => {
        server = await startTestServer(db.choice())
        f = await seedFixture(server, "Browser org")
        // The member belongs to a second organization too, so the page must let them pick.
        second = await server.run(Effect.gen(function*() {
          const tenancy = yield* Tenancy.Tenancy
          const org = yield* tenancy.createOrganization({ name: "Second org" })
          yield* tenancy.addMember(org.id, f.userId, "admin")
          return { id: org.id, name: org.name }
        }).pipe(Effect.orDie))
        // A loopback URI without a port: the app listens wherever the system lets it (RFC 8252 §7.3).
        app = await registerApp(server, f.live, { name: "Browser app", redirect_uris: ["http://127.0.0.1/callback"] })
      })
      afterAll(() => server.close())

      const open = async () => {
        const context = await browser.newContext()
        return { context, page: await context.newPage() }
      }

      const startAt = async (page: Page, state: string, scope = "locations:read expenses:read") => {
        const { challenge, verifier } = await pkce()
        await page.goto(server.url + authorizeUrl({ client_id: app.client_id, redirect_uri: CALLBACK, scope, code_challenge: challenge, state }))
        return verifier
      }

      const signIn = async (page: Page, password = MEMBER_PASSWORD) => {
        await page.fill("#email", memberEmail(f))
        await page.fill("#password", password)
        await page.click("button.primary")
      }

      it("sign in, pick the organization and environment, review the scopes, approve", async () => {
        const { context, page } = await open()
        const verifier = await startAt(page, "browser-state-1")
        expect(await page.title()).toContain("Sign in")
        const headers = (await page.request.get(page.url())).headers()
        expect(headers["x-frame-options"]).toBe("DENY")
        await signIn(page)
        await page.waitForURL(/\/api\/oauth\/consent\?request=/)
        expect(await page.textContent("h1")).toContain("Browser app wants access")
        const scopes = await page.textContent("ul.scopes")
        expect(scopes).toContain(Scopes.scopeCatalog["locations:read"])
        expect(scopes).toContain(Scopes.scopeCatalog["expenses:read"])
        const options = await page.$$eval("#organization_id option", (os) => os.map((o) => (o as HTMLOptionElement).value))
        expect(options.sort()).toEqual([f.organizationId, second.id].sort())
        await page.selectOption("#organization_id", second.id)
        await page.check("input[name=environment][value=sandbox]")
        await Promise.all([page.waitForURL(atCallback), page.click("button[value=approve]")])
        const callback = new URL(page.url())
        expect(callback.searchParams.get("state")).toBe("browser-state-1")
        expect(callback.searchParams.get("iss")).toBe(server.url)
        expect(receiver.received.map((u) => u.searchParams.get("state"))).toContain("browser-state-1")
        const code = callback.searchParams.get("code")
        expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/)

        // The code grants exactly what was picked: the second organization's sandbox.
        const tokens = await postForm(server, "/api/oauth/token", {
          grant_type: "authorization_code",
          code: code!,
          code_verifier: verifier,
          redirect_uri: CALLBACK
        }, { clientId: app.client_id, secret: app.client_secret! })
        expect(tokens.status).toBe(200)
        const introspected = await postForm(server, "/api/oauth/introspect", { token: tokens.json.access_token }, {
          clientId: app.client_id,
          secret: app.client_secret!
        })
        expect(introspected.json).toMatchObject({ active: true, organization_id: second.id, environment: "sandbox" })
        expect((await call(server, "GET", "/v1/expenses", { token: tokens.json.access_token })).status).toBe(200)

        // Signed in, the next request of this browser goes straight to consent.
        await startAt(page, "browser-state-2")
        await page.waitForURL(/\/api\/oauth\/consent\?request=/)
        expect(await page.$("#password")).toBeNull()
        expect(await page.$("button[value=approve]")).not.toBeNull()
        await context.close()
      })

      it("deny sends the browser back with access_denied and the same state", async () => {
        const { context, page } = await open()
        await startAt(page, "browser-deny-state")
        await signIn(page)
        await page.waitForURL(/\/api\/oauth\/consent\?request=/)
        await Promise.all([page.waitForURL(atCallback), page.click("button[value=deny]")])
        const callback = new URL(page.url())
        expect(callback.searchParams.get("error")).toBe("access_denied")
        expect(callback.searchParams.get("state")).toBe("browser-deny-state")
        expect(callback.searchParams.get("code")).toBeNull()
        await context.close()
      })

      it("a wrong password shows the sign-in form again with an error", async () => {
        const { context, page } = await open()
        await startAt(page, "s")
        await signIn(page, "wrong password!")
        expect(await page.textContent("[role=alert]")).toContain("email or password is not correct")
        expect(await page.inputValue("#email")).toBe(memberEmail(f))
        await signIn(page)
        await page.waitForURL(/\/api\/oauth\/consent\?request=/)
        await context.close()
      })

      it("a tampered CSRF token is refused and nothing is granted", async () => {
        const { context, page } = await open()
        await startAt(page, "csrf-state")
        await signIn(page)
        await page.waitForURL(/\/api\/oauth\/consent\?request=/)
        await page.$eval("form[action='/api/oauth/consent'] input[name=csrf]", (el) => {
          const input = el as HTMLInputElement
          input.value = input.value.slice(0, -2) + (input.value.endsWith("AA") ? "BB" : "AA")
        })
        const [response] = await Promise.all([page.waitForNavigation(), page.click("button[value=approve]")])
        expect(response!.status()).toBe(403)
        expect(page.url().startsWith(CALLBACK)).toBe(false)
        expect(await page.textContent("[role=alert]")).toContain("not sent by this page")
        await context.close()
      })

      it("a bad redirect_uri shows an error page and never leaves the server", async () => {
        const { context, page } = await open()
        const { challenge } = await pkce()
        const response = await page.goto(server.url + authorizeUrl({
          client_id: app.client_id,
          redirect_uri: `${CALLBACK}/`,
          scope: "locations:read",
          code_challenge: challenge,
          state: "x"
        }))
        expect(response!.status()).toBe(400)
        expect(page.url().startsWith(server.url)).toBe(true)
        expect(await page.textContent("[role=alert]")).toContain("redirect_uri")
        await context.close()
      })
    })
  }
})
