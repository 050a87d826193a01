import { Effect } from "effect"
import * as http from "node:http"
import * as oauth from "oauth4webapi"
import { OAuthApps, type OAuthModel } from "@opsplatform/core"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import type { Fixture } from "@opsplatform/testing"
import type { TestServer } from "../support/server.ts"

/** The password `makeFixture` gives its member. */
export const MEMBER_PASSWORD = "correct horse battery staple"

export const memberEmail = (f: Fixture) => `member-${f.organizationId}@example.test`

/** Registers an app straight through the service (owner null: an operator's app). */
export const registerApp = (
  server: TestServer,
  owner: Tenant | null,
  input: Partial<OAuthModel.AppCreate> = {}
): Promise<OAuthModel.OAuthAppWithSecret> =>
  server.run(Effect.gen(function*() {
    const apps = yield* OAuthApps.OAuthApps
    return yield* apps.register(owner, {
      name: "Test app",
      type: "confidential",
      redirect_uris: ["http://127.0.0.1:7777/callback"],
      scopes: ["locations:read", "locations:write", "expenses:read"],
      grant_types: ["authorization_code", "refresh_token", "client_credentials"],
      ...input
    })
  }).pipe(Effect.orDie))

/** The operator's verification of an app (`opsplatform admin verify-app`), through the service. */
export const verifyApp = (server: TestServer, clientId: string, verified = true) =>
  server.run(Effect.flatMap(OAuthApps.OAuthApps, (apps) => apps.setVerified(clientId, verified)).pipe(Effect.orDie))

export const install = (server: TestServer, tenant: Tenant, clientId: string, scopes: ReadonlyArray<string>) =>
  server.run(Effect.gen(function*() {
    const apps = yield* OAuthApps.OAuthApps
    return yield* apps.install(tenant, { client_id: clientId, scopes })
  }).pipe(Effect.orDie))

export const pkce = async () => {
  const verifier = oauth.generateRandomCodeVerifier()
  return { verifier, challenge: await oauth.calculatePKCECodeChallenge(verifier) }
}

/** A user agent without a browser: a cookie jar and manual redirects, for driving the consent pages with fetch. */
export class Agent {
  readonly cookies = new Map<string, string>()
  constructor(readonly base: string) {}

  private remember(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";")
      const eq = pair!.indexOf("=")
      const name = pair!.slice(0, eq).trim()
      const value = pair!.slice(eq + 1).trim()
      if (/max-age=0/i.test(line) || value === "") this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
  }

  private headers(extra: Record<string, string> = {}) {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ")
    return { ...(cookie === "" ? {} : { cookie }), ...extra }
  }

  async get(path: string) {
    const response = await fetch(new URL(path, this.base), { redirect: "manual", headers: this.headers() })
    this.remember(response)
    return { status: response.status, location: response.headers.get("location"), headers: response.headers, text: await response.text() }
  }

  async post(path: string, form: Record<string, string>) {
    const response = await fetch(new URL(path, this.base), {
      method: "POST",
      redirect: "manual",
      headers: this.headers({ "content-type": "application/x-www-form-urlencoded" }),
      body: new URLSearchParams(form).toString()
    })
    this.remember(response)
    return { status: response.status, location: response.headers.get("location"), headers: response.headers, text: await response.text() }
  }
}

export const hiddenField = (html: string, name: string): string => {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(html)
  if (m === null) throw new Error(`no hidden field ${name} in:\n${html}`)
  return m[1]!.replace(/&amp;/g, "&")
}

export interface ConsentChoice {
  readonly email: string
  readonly password: string
  readonly organizationId?: string
  readonly environment?: "live" | "sandbox"
  readonly decision?: "approve" | "deny"
}

/**
 * Follows an authorize request through sign-in and consent as a browser
 * would, and returns the URL the server finally sends the browser to.
 */
export const consentThroughPages = async (agent: Agent, authorizeUrl: string, choice: ConsentChoice): Promise<URL> => {
  const start = await agent.get(authorizeUrl)
  if (start.status !== 303) throw new Error(`authorize answered ${start.status}: ${start.location ?? start.text}`)
  const signInPage = await agent.get(start.location!)
  const request = hiddenField(signInPage.text, "request")
  const signedIn = await agent.post("/api/oauth/sign-in", {
    request,
    csrf: hiddenField(signInPage.text, "csrf"),
    email: choice.email,
    password: choice.password
  })
  if (signedIn.status !== 303) throw new Error(`sign-in answered ${signedIn.status}: ${signedIn.text}`)
  const consentPage = await agent.get(signedIn.location!)
  const decided = await agent.post("/api/oauth/consent", {
    request,
    csrf: hiddenField(consentPage.text, "csrf"),
    decision: choice.decision ?? "approve",
    ...(choice.organizationId !== undefined ? { organization_id: choice.organizationId } : {}),
    environment: choice.environment ?? "live"
  })
  if (decided.status !== 303) throw new Error(`consent answered ${decided.status}: ${decided.text}`)
  return new URL(decided.location!)
}

/** The authorize address for a client, with PKCE S256 and a state, overridable parameter by parameter. */
export const authorizeUrl = (params: Record<string, string | undefined>) => {
  const query = new URLSearchParams()
  for (const [k, v] of Object.entries({ response_type: "code", code_challenge_method: "S256", ...params })) {
    if (v !== undefined) query.set(k, v)
  }
  return `/api/oauth/authorize?${query}`
}

/** POSTs a form to an OAuth endpoint; `basic` adds client_secret_basic. */
export const postForm = async (
  server: TestServer,
  path: string,
  form: Record<string, string>,
  basic?: { readonly clientId: string; readonly secret: string }
) => {
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" }
  if (basic) {
    headers.authorization = `Basic ${
      btoa(`${encodeURIComponent(basic.clientId)}:${encodeURIComponent(basic.secret)}`)
    }`
  }
  const response = await fetch(`${server.url}${path}`, { method: "POST", headers, body: new URLSearchParams(form).toString() })
  const text = await response.text()
  let json: any
  try {
    json = text === "" ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, json, text }
}

/** The app's side of the redirect: a loopback HTTP server that records every callback it receives. */
export const startCallbackReceiver = async () => {
  const received: Array<URL> = []
  const server = http.createServer((req, res) => {
    received.push(new URL(req.url ?? "/", "http://127.0.0.1"))
    res.writeHead(200, { "content-type": "text/html" }).end("<p>back at the app</p>")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  return {
    callback: `http://127.0.0.1:${port}/callback`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
