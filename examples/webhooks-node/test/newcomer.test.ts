import { createClient } from "@opsplatform/client"
import { type Process, type SendingPlatform, start, startSendingPlatform } from "@opsplatform/example-support"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, expect, it } from "vitest"

/**
 * The "done when": a newcomer copies this example into an empty
 * folder, installs it, and sees it verify a delivery from a running server.
 * The verify package comes from its packed tarball (what the registry would
 * serve), never from the workspace; Express and Fastify come from npm
 * (the cache first).
 */
const run = promisify(execFile)
const exampleDir = fileURLToPath(new URL("..", import.meta.url))
const verifyDir = fileURLToPath(new URL("../../../packages/webhooks-verify", import.meta.url))
const work = fs.mkdtempSync(path.join(os.tmpdir(), "opsplatform-newcomer-"))
const app = path.join(work, "my-receiver")

let platform: SendingPlatform
let receiver: Process | undefined

beforeAll(async () => {
  platform = await startSendingPlatform("Newcomer org")
})
afterAll(async () => {
  await receiver?.stop()
  await platform?.close()
  fs.rmSync(work, { recursive: true, force: true })
})

it("copy the example into an empty folder, npm install it, and it verifies a delivery from a running server", async () => {
  // What the newcomer copies: the example as it is in the repository, without its tests.
  fs.mkdirSync(app)
  for (const entry of ["package.json", "README.md", "src"]) fs.cpSync(path.join(exampleDir, entry), path.join(app, entry), { recursive: true })
  expect(fs.readdirSync(app).sort()).toEqual(["README.md", "package.json", "src"])

  const { stdout: packed } = await run("npm", ["pack", "--json", "--pack-destination", work], { cwd: verifyDir })
  const tarball = path.join(work, (JSON.parse(packed) as Array<{ filename: string }>)[0]!.filename)
  await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", tarball], { cwd: app, timeout: 240_000 })

  // The package resolved from the tarball: a copy of its own, not a link into this repository.
  const installed = path.join(app, "node_modules/@opsplatform/webhooks-verify")
  expect(fs.lstatSync(installed).isSymbolicLink()).toBe(false)
  expect(fs.existsSync(path.join(installed, "src"))).toBe(false)
  expect(JSON.parse(fs.readFileSync(path.join(app, "package.json"), "utf8")).dependencies["@opsplatform/webhooks-verify"]).toMatch(/^file:/)

  // The platform side, as the README's steps do it: a sandbox key subscribes the receiver and sends a test ping.
  const { port, subscription } = await platform.subscribe(["invoice.paid"])

  receiver = start("npm", ["start"], { cwd: app, env: { PORT: String(port), OPSPLATFORM_WEBHOOK_SECRET: subscription.secret! } })
  await receiver.waitFor(/receiving on/)
  const ops = createClient({ baseUrl: platform.server.url, token: platform.fixture.tokens.sandbox })
  const ping = await ops.post("/v1/webhooks/{id}/test", { params: { path: { id: subscription.id } } })
  expect(await receiver.waitFor(/^verified webhook\.test/, 30_000)).toBe(`verified webhook.test ${ping.event_id}`)
}, 300_000)
