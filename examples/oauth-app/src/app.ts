/**
 * A third-party app connecting to an Operations Platform organization with
 * OAuth 2.0: the authorization code grant with PKCE (S256), done by
 * oauth4webapi, then calls to /v1 with the access token through
 * @opsplatform/client, and a refresh that rotates the refresh token.
 *
 *     OPSPLATFORM_URL=http://localhost:8080 CLIENT_ID=app_… CLIENT_SECRET=svc_cs_… PORT=3001 npm start
 *
 * One user and memory for storage: a real app keeps the pending logins and
 * the tokens per user, in its own session store.
 */
import { createClient } from "@opsplatform/client"
import { createServer, type ServerResponse } from "node:http"
import * as oauth from "oauth4webapi"

const issuer = new URL(process.env.OPSPLATFORM_URL ?? "http://localhost:8080")
const port = Number(process.env.PORT ?? 3001)
const redirectUri = `http://127.0.0.1:${port}/callback`
const client: oauth.Client = { client_id: process.env.CLIENT_ID! }
const clientAuth = oauth.ClientSecretBasic(process.env.CLIENT_SECRET!)
// The platform on plain http (a local server); drop this against an https one.
const http = issuer.protocol === "http:" ? { [oauth.allowInsecureRequests]: true } : {}

const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...http }))
const pending = new Map<string, string>() // state → code verifier
let tokens: { access: string; refresh: string | undefined } | undefined

const api = createClient({ baseUrl: issuer.origin, token: () => tokens!.access })

const escape = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)

const page = (res: ServerResponse, status: number, body: string) =>
  res.writeHead(status, { "content-type": "text/html; charset=utf-8" }).end(`<!doctype html><title>Dispatch board</title>${body}`)

const showLocations = async (res: ServerResponse, heading: string) => {
  const organization = await api.get("/v1/organization")
  const names = []
  for await (const location of api.list("/v1/locations")) names.push(location.name)
  console.log(`${heading}: ${organization.name}, ${names.length} locations`)
  page(res, 200, `<h1>${heading}</h1><p id="organization">${escape(organization.name)}</p><ul id="locations">${names.map((n) => `<li>${escape(n)}</li>`).join("")}</ul>
<form method="post" action="/refresh"><button>Refresh the token</button></form>`)
}

createServer(async (req, res) => {
  const url = new URL(req.url!, redirectUri)
  try {
    if (url.pathname === "/") return page(res, 200, `<h1>Dispatch board</h1><a id="connect" href="/login">Connect your organization</a>`)
    if (url.pathname === "/login") {
      const verifier = oauth.generateRandomCodeVerifier()
      const state = oauth.generateRandomState()
      pending.set(state, verifier)
      const authorize = new URL(as.authorization_endpoint!)
      authorize.search = new URLSearchParams({
        response_type: "code",
        client_id: client.client_id,
        redirect_uri: redirectUri,
        scope: "organization:read locations:read",
        state,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256"
      }).toString()
      return void res.writeHead(302, { location: authorize.href }).end()
    }
    if (url.pathname === "/callback") {
      const state = url.searchParams.get("state") ?? ""
      const verifier = pending.get(state)
      if (verifier === undefined) return page(res, 400, "<h1>Unknown or used login</h1>")
      pending.delete(state)
      if (url.searchParams.get("error") === "access_denied") return page(res, 200, `<h1>Not connected</h1><p>You declined.</p>`)
      const params = oauth.validateAuthResponse(as, client, url, state)
      const granted = await oauth.processAuthorizationCodeResponse(
        as,
        client,
        await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, redirectUri, verifier, http)
      )
      tokens = { access: granted.access_token, refresh: granted.refresh_token }
      return await showLocations(res, "Connected")
    }
    if (url.pathname === "/refresh" && req.method === "POST" && tokens?.refresh !== undefined) {
      // Every refresh returns a new refresh token: keep only the newest.
      const refreshed = await oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh, http)
      )
      tokens = { access: refreshed.access_token, refresh: refreshed.refresh_token }
      return await showLocations(res, "Refreshed")
    }
    page(res, 404, "<h1>Not found</h1>")
  } catch (error) {
    console.error(error)
    page(res, 500, `<h1>Something failed</h1><pre>${escape(String((error as Error).message))}</pre>`)
  }
}).listen(port, "127.0.0.1", () => console.log(`app on http://127.0.0.1:${port}`))
