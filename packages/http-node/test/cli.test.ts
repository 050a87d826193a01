import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { assertBuilt, freePort, listenerClosed, runCli, runCommand, startServe } from "./support/cli.ts"

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "opsplatform-cli-"))
/** The CLI on the embedded database (no DATABASE_URL), as a newcomer runs it. */
const env = { OPSPLATFORM_DATA_DIR: dataDir, DATABASE_URL: undefined, OPSPLATFORM_LOG_LEVEL: "Info" }
const json = (text: string) => JSON.parse(text.trim().split("\n").filter((l) => l.startsWith("{") || l.startsWith("[")).pop()!)

beforeAll(() => assertBuilt())
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))

/**
 * Each command runs once as the binary (`runCli`: a Node process, as a user runs it) and otherwise in
 * this process (`runCommand`: the same command and output without starting Node each time).
 */
describe("opsplatform CLI on the embedded database", () => {
  let orgId: string

  it("migrate applies the migrations once and prints them as JSON", async () => {
    const first = await runCli(["migrate"], env)
    expect(first.code, first.stderr).toBe(0)
    expect(json(first.stdout).applied).toContain("0001_foundation")
    const second = await runCommand(["migrate"], env)
    expect(json(second.stdout)).toEqual({ applied: [] })
  }, 120_000)

  it("admin create-org prints {id, name}", async () => {
    const res = await runCli(["admin", "create-org", "--name", "Acme Logistics"], env)
    expect(res.code, res.stderr).toBe(0)
    const out = json(res.stdout)
    expect(Object.keys(out).sort()).toEqual(["id", "name"])
    expect(out.name).toBe("Acme Logistics")
    orgId = out.id
  }, 60_000)

  it("admin create-key prints the token once, for every kind", async () => {
    const api = json((await runCli(["admin", "create-key", "--org", orgId, "--env", "live", "--kind", "api", "--scopes", "locations:read locations:write"], env)).stdout)
    expect(api).toMatchObject({ kind: "api", environment: "live", scopes: ["locations:read", "locations:write"] })
    expect(api.token).toMatch(/^svc_key_/)
    expect(Object.keys(api).sort()).toEqual(["environment", "id", "kind", "scopes", "token"])

    const personal = json((await runCommand(["admin", "create-key", "--org", orgId, "--env", "sandbox", "--kind", "personal", "--scopes", "expenses:read"], env)).stdout)
    expect(personal.token).toMatch(/^svc_pt_/)
    expect(personal.environment).toBe("sandbox")
    expect(personal.user_id).toMatch(/^[0-9a-f-]{36}$/)

    const again = json((await runCommand(["admin", "create-key", "--org", orgId, "--env", "sandbox", "--kind", "personal", "--scopes", "expenses:read", "--user", personal.user_id], env)).stdout)
    expect(again.user_id).toBe(personal.user_id)

    const device = json((await runCommand(["admin", "create-key", "--org", orgId, "--env", "live", "--kind", "device", "--scopes", "display:read"], env)).stdout)
    expect(device.token).toMatch(/^svc_dt_/)
    expect(device.device_id).toMatch(/^[0-9a-f-]{36}$/)

    const listed = json((await runCli(["admin", "list-keys", "--org", orgId], env)).stdout)
    expect(listed.map((k: any) => k.id).sort()).toEqual([api.id, personal.id, again.id, device.id].sort())
    expect(JSON.stringify(listed)).not.toContain(api.token)

    const revoked = json((await runCli(["admin", "revoke-key", "--id", api.id], env)).stdout)
    expect(revoked.id).toBe(api.id)
    expect(typeof revoked.revoked_at).toBe("string")
    const after = json((await runCommand(["admin", "list-keys", "--org", orgId, "--env", "live"], env)).stdout)
    expect(after.map((k: any) => k.id)).toEqual([device.id])
  }, 180_000)

  it("reports bad input as a JSON error on stderr with exit status 1 and nothing on stdout", async () => {
    const res = await runCli(["admin", "create-key", "--org", orgId, "--env", "live", "--kind", "device", "--scopes", "locations:read"], env)
    expect(res.code).toBe(1)
    expect(res.stdout.trim()).toBe("")
    expect(json(res.stderr).error.code).toBe("validation_failed")
    const unknownOrg = await runCommand(["admin", "create-key", "--org", "00000000-0000-4000-8000-000000000000", "--env", "live", "--scopes", "locations:read"], env)
    expect(unknownOrg.code).toBe(1)
    expect(json(unknownOrg.stderr).error.code).toBe("not_found")
  }, 60_000)
})

describe("opsplatform serve", () => {
  const serveDir = fs.mkdtempSync(path.join(os.tmpdir(), "opsplatform-serve-"))
  const serveEnv = { OPSPLATFORM_DATA_DIR: serveDir, DATABASE_URL: undefined }
  afterAll(() => fs.rmSync(serveDir, { recursive: true, force: true }))

  it("creates a demo organization on an empty database, keeps data across restarts, and finishes in-flight requests on SIGTERM", async () => {
    const port = await freePort()
    const first = await startServe(port, serveEnv)
    const demo = json(first.stdout()).demo
    expect(demo.api_key).toMatch(/^svc_key_/)
    const auth = { authorization: `Bearer ${demo.api_key}`, "content-type": "application/json" }
    const list = await fetch(`${first.url}/v1/locations`, { headers: auth })
    expect(list.status).toBe(200)
    expect((await list.json()).meta).toEqual({ page: 1, perPage: 25, total: 0, totalPages: 0, nextCursor: null })
    const created = await (await fetch(`${first.url}/v1/locations`, { method: "POST", headers: auth, body: JSON.stringify({ name: "Kept" }) })).json()

    // A second process on the same embedded directory is refused with a clear message.
    const clash = await runCli(["migrate"], serveEnv)
    expect(clash.code).not.toBe(0)
    expect(clash.stderr).toContain("in use by process")

    // An in-flight request: headers sent, body not yet complete, when SIGTERM arrives. `Expect:
    // 100-continue` makes the server say when its handler starts reading the body; the interim
    // 100 response is not part of the response asserted on.
    const body = JSON.stringify({ name: "In flight" })
    const socket = net.connect(port, "127.0.0.1")
    await new Promise((r) => socket.once("connect", r))
    let response = ""
    const reading = new Promise<void>((resolve) => {
      socket.on("data", (d) => {
        response += d
        const interim = /^HTTP\/1\.1 100 [^\r]*\r\n\r\n/.exec(response)
        if (interim !== null) {
          response = response.slice(interim[0].length)
          resolve()
        }
      })
    })
    socket.write(`POST /v1/locations HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${demo.api_key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`)
    await reading
    first.child.kill("SIGTERM")
    await listenerClosed(port)
    socket.write(body.slice(5))
    await new Promise((r) => socket.once("close", r))
    expect(response).toMatch(/^HTTP\/1\.1 201/)
    expect(await first.exited).toBe(0)

    const second = await startServe(port, serveEnv)
    expect(second.stdout().trim()).toBe("") // no second demo organization
    const kept = await (await fetch(`${second.url}/v1/locations?perPage=100`, { headers: auth })).json()
    expect(kept.data.map((l: any) => l.name).sort()).toEqual(["In flight", "Kept"])
    expect(kept.data.map((l: any) => l.id)).toContain(created.data.id)
    second.child.kill("SIGTERM")
    expect(await second.exited).toBe(0)
  }, 240_000)
})
