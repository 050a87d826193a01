import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { assertBuilt, freePort, runCli, runCommand, startServe } from "../support/cli.ts"
import { Agent, authorizeUrl, consentThroughPages, pkce } from "./support.ts"

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "opsplatform-oauth-cli-"))
const env = { OPSPLATFORM_DATA_DIR: dataDir, DATABASE_URL: undefined }
const json = (text: string) => JSON.parse(text.trim().split("\n").filter((l) => l.startsWith("{")).pop()!)

beforeAll(() => assertBuilt())
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))

describe("opsplatform admin: OAuth apps and member passwords", () => {
  const email = "dispatcher@example.test"
  const password = "a long and private passphrase"
  let orgId: string
  let app: any

  it("create-app prints the client_id, and the secret once for a confidential app", async () => {
    orgId = json((await runCommand(["admin", "create-org", "--name", "CLI OAuth"], env)).stdout).id
    const res = await runCli([
      "admin",
      "create-app",
      "--name",
      "Dispatch board",
      "--type",
      "confidential",
      "--redirect-uri",
      "http://127.0.0.1/callback",
      "--redirect-uri",
      "https://board.example/callback",
      "--scopes",
      "locations:read expenses:read",
      "--grants",
      "authorization_code refresh_token client_credentials",
      "--org",
      orgId,
      "--env",
      "live"
    ], env)
    expect(res.code, res.stderr).toBe(0)
    app = json(res.stdout)
    expect(app.client_id).toMatch(/^app_/)
    expect(app.client_secret).toMatch(/^svc_cs_/)
    expect(app).toMatchObject({
      type: "confidential",
      redirect_uris: ["http://127.0.0.1/callback", "https://board.example/callback"],
      scopes: ["locations:read", "expenses:read"],
      grant_types: ["authorization_code", "refresh_token", "client_credentials"],
      organization_id: orgId,
      environment: "live"
    })
    const operators = json((await runCommand([
      "admin",
      "create-app",
      "--name",
      "Operator tool",
      "--type",
      "public",
      "--redirect-uri",
      "http://[::1]/cb",
      "--scopes",
      "locations:read",
      "--grants",
      "authorization_code"
    ], env)).stdout)
    expect(operators.client_secret).toBeUndefined()
    expect(operators.organization_id).toBeNull()
  }, 120_000)

  it("create-app refuses bad grants, scopes and redirect URIs with a JSON error", async () => {
    const base = ["admin", "create-app", "--name", "Bad", "--type", "public", "--redirect-uri", "http://example.com/cb", "--scopes", "locations:read"]
    const badUri = await runCommand([...base, "--grants", "authorization_code"], env)
    expect(badUri.code).toBe(1)
    expect(json(badUri.stderr).error.details[0].field).toBe("redirect_uris.0")
    const badGrant = await runCommand([...base, "--grants", "password"], env)
    expect(json(badGrant.stderr).error).toMatchObject({ code: "validation_failed", details: [{ field: "grants" }] })
    const halfOwner = await runCommand([...base, "--grants", "authorization_code", "--org", orgId], env)
    expect(json(halfOwner.stderr).error.code).toBe("validation_failed")
    const notAnOrg = await runCommand([...base.slice(0, 7), "http://127.0.0.1/cb", ...base.slice(8), "--grants", "authorization_code", "--org", "acme", "--env", "live"], env)
    expect(json(notAnOrg.stderr).error.code).toBe("not_found")
  }, 120_000)

  it("install-app installs the app with scopes within the app's", async () => {
    const res = await runCli(["admin", "install-app", "--client-id", app.client_id, "--org", orgId, "--env", "sandbox", "--scopes", "locations:read"], env)
    expect(res.code, res.stderr).toBe(0)
    expect(json(res.stdout)).toMatchObject({ client_id: app.client_id, environment: "sandbox", scopes: ["locations:read"], organization_id: orgId })
    const beyond = await runCommand(["admin", "install-app", "--client-id", app.client_id, "--org", orgId, "--env", "live", "--scopes", "apps:write"], env)
    expect(beyond.code).toBe(1)
    expect(json(beyond.stderr).error.code).toBe("validation_failed")
  }, 120_000)

  it("set-password reads the password from stdin, refuses short ones and unknown members", async () => {
    const member = json((await runCommand(["admin", "create-key", "--org", orgId, "--env", "live", "--kind", "personal", "--email", email, "--scopes", "locations:read"], env)).stdout)
    const res = await runCli(["admin", "set-password", "--email", email], env, `${password}\n`)
    expect(res.code, res.stderr).toBe(0)
    expect(json(res.stdout)).toEqual({ user_id: member.user_id, email, password_set: true })
    const short = await runCommand(["admin", "set-password", "--email", email, "--password", "short"], env)
    expect(json(short.stderr).error.code).toBe("validation_failed")
    const nobody = await runCommand(["admin", "set-password", "--email", "nobody@example.test", "--password", password], env)
    expect(json(nobody.stderr).error.code).toBe("not_found")
  }, 120_000)

  it("the member signs in with that password and the app completes the flow against `opsplatform serve`", async () => {
    const port = await freePort()
    const served = await startServe(port, env)
    try {
      const { challenge, verifier } = await pkce()
      const callback = await consentThroughPages(
        new Agent(served.url),
        authorizeUrl({ client_id: app.client_id, redirect_uri: "http://127.0.0.1:45678/callback", scope: "locations:read", code_challenge: challenge, state: "cli" }),
        { email, password, organizationId: orgId, environment: "live" }
      )
      const token = await fetch(`${served.url}/api/oauth/token`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${btoa(`${app.client_id}:${app.client_secret}`)}`
        },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code: callback.searchParams.get("code")!,
          code_verifier: verifier,
          redirect_uri: "http://127.0.0.1:45678/callback"
        })
      })
      expect(token.status).toBe(200)
      const { access_token } = await token.json()
      const list = await fetch(`${served.url}/v1/locations`, { headers: { authorization: `Bearer ${access_token}` } })
      expect(list.status).toBe(200)
    } finally {
      served.child.kill("SIGTERM")
      await served.exited
    }
  }, 180_000)
})
