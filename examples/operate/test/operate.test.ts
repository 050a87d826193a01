import { bin, embeddedDataDir, freePort, lastJson, opsplatform, type Process, start } from "@opsplatform/example-support"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import { afterAll, expect, it } from "vitest"

/**
 * The README's steps, as an operator runs them: the CLI creates an
 * organization and a key, `opsplatform serve` starts, and `npm start` calls
 * the API with the client. PostgreSQL when DATABASE_URL is set (the admin
 * commands may then run beside the server), otherwise an embedded data
 * directory (admin commands first: the embedded database serves one process).
 */
const exampleDir = fileURLToPath(new URL("..", import.meta.url))
let serve: Process | undefined
let dataDir: string | undefined

afterAll(async () => {
  await serve?.stop()
  if (dataDir !== undefined) fs.rmSync(dataDir, { recursive: true, force: true })
})

it("create an organization and a key with the CLI, serve, and call the API with the client", async () => {
  dataDir = process.env.DATABASE_URL ? undefined : await embeddedDataDir()
  const env = dataDir === undefined ? {} : { OPSPLATFORM_DATA_DIR: dataDir, DATABASE_URL: undefined }

  const org = await opsplatform(["admin", "create-org", "--name", "Acme Logistics"], env)
  expect(org.code, org.stderr).toBe(0)
  const { id: orgId } = lastJson(org.stdout)
  const key = await opsplatform(["admin", "create-key", "--org", orgId, "--env", "live", "--kind", "api", "--scopes", "locations:read locations:write expenses:read expenses:write"], env)
  expect(key.code, key.stderr).toBe(0)
  const { token } = lastJson(key.stdout)
  expect(token).toMatch(/^svc_key_/)

  const port = await freePort()
  serve = start(process.execPath, [bin, "serve", "--port", String(port), "--host", "127.0.0.1"], { env })
  await serve.waitFor(/"message":"listening"/, 90_000)

  const client = start("npm", ["start"], { cwd: exampleDir, env: { OPSPLATFORM_URL: `http://127.0.0.1:${port}`, OPSPLATFORM_KEY: token } })
  await client.waitFor(/"step":"not found"/, 60_000)
  const steps = client.stdout().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
  expect(steps.map((s) => s.step)).toEqual(["location", "expenses", "not found"])
  expect(steps[0].name).toBe("Main depot")
  expect(steps[1].expenses).toEqual(["Parking: 12.50 RON", "Tolls: 38.00 RON", "Diesel, 60 l: 432.60 RON"])
  expect(steps[2]).toMatchObject({ code: "not_found", requestId: expect.stringMatching(/^req_/) })
  await client.stop()
}, 240_000)
