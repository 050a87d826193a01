import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { assertBuilt, freePort, runCommand, type Serving, startServe } from "./support/cli.ts"
import { type PrivatePostgres, privatePostgres } from "./support/privatePostgres.ts"
import { type Receiver, receiverCertificateFile, startReceiver } from "./support/receiver.ts"

/**
 * Faults a production server meets: its process killed mid-burst, and its
 * PostgreSQL going away and coming back. Both run on the run's private
 * PostgreSQL server (support/privatePostgres.ts), in a database of their own,
 * and stop and start that server; the API server is `opsplatform serve` as a
 * child process.
 */

const json = (text: string) => JSON.parse(text.trim().split("\n").filter((l) => l.startsWith("{")).pop()!)

/** A plate for the i-th vehicle of a burst (B, three digits, three letters: unique below 900 × 24). */
const plate = (i: number) => `B ${100 + (i % 900)} ${"ABCDEFGHJKLMNPRSTUVWXYZ"[Math.floor(i / 900) % 23]}FT`

const workerEnv = {
  OPSPLATFORM_WEBHOOKS_ALLOW_PRIVATE: "true",
  // A lease a killed worker leaves behind runs out soon, so the restarted one takes its deliveries over.
  OPSPLATFORM_WEBHOOKS_LEASE_MS: "3000",
  OPSPLATFORM_WEBHOOKS_POLL_MS: "200",
  OPSPLATFORM_WEBHOOKS_SCHEDULE_MS: "200,400,800,1000,1000,1000,1000"
}

const request = async (url: string, method: string, token: string, body?: unknown) => {
  const response = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  let parsed: any
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: response.status, requestId: response.headers.get("x-request-id"), json: parsed, text }
}

/** Every item of a list, page by page. */
const listAll = async (url: string, token: string): Promise<Array<any>> => {
  const items: Array<any> = []
  for (let page = 1; ; page++) {
    const res = await request(`${url}${url.includes("?") ? "&" : "?"}perPage=100&page=${page}`, "GET", token)
    if (res.status !== 200) throw new Error(`listing ${url} answered ${res.status}: ${res.text}`)
    items.push(...res.json.data)
    if (page >= res.json.meta.totalPages) return items
  }
}

const psql = (url: string, statement: string): string =>
  execFileSync("psql", [url, "-At", "-c", statement], { encoding: "utf8" }).trim()

/**
 * Sends waves of concurrent vehicle creates to `victim` and SIGKILLs it while
 * requests are in flight; restarts with `restart`, then checks every
 * acknowledged vehicle is stored and every stored one's event reaches
 * `receiver` (which verifies each signature with standardwebhooks). Returns
 * the stored vehicles.
 */
const killDuringBurst = async (
  victim: Serving,
  restart: () => Promise<Serving>,
  token: string,
  receiver: Receiver,
  label: string
): Promise<Array<any>> => {
  const acknowledged = new Map<string, string>()
  const answered: Array<number> = []
  let sent = 0
  let killed = false
  const burst = (async () => {
    for (let wave = 0; wave < 60 && !killed; wave++) {
      await Promise.all(Array.from({ length: 20 }, async () => {
        const i = sent++
        try {
          const res = await request(`${victim.url}/v1/fleet-vehicles`, "POST", token, { plate: plate(i), fuel_type: "diesel" })
          answered.push(res.status)
          if (res.status === 201) acknowledged.set(res.json.data.id, res.json.data.plate)
        } catch {
          // the connection died with the process: not acknowledged
        }
      }))
    }
  })()
  // Kill once a good part of the burst is acknowledged, in the middle of a wave.
  while (acknowledged.size < 90) await new Promise((r) => setTimeout(r, 2))
  victim.child.kill("SIGKILL")
  killed = true
  await burst
  await victim.exited
  expect(victim.child.signalCode).toBe("SIGKILL")
  expect(answered.every((s) => s === 201)).toBe(true)

  const restarted = await restart()
  const stored = await listAll(`${restarted.url}/v1/fleet-vehicles`, token)
  const storedIds = new Set(stored.map((v) => v.id))
  expect([...acknowledged.keys()].filter((id) => !storedIds.has(id))).toEqual([])
  const deliveredIds = () => new Set(receiver.received.map((r) => JSON.parse(r.body).data.id as string))
  await receiver.until(() => stored.every((v) => deliveredIds().has(v.id)), 60_000)
  // No event of a vehicle that is not stored, and none that fails verification.
  expect([...deliveredIds()].filter((id) => !storedIds.has(id))).toEqual([])
  expect(receiver.rejected).toEqual([])
  console.info(
    `faults (${label}): ${sent} writes sent, ${acknowledged.size} acknowledged before SIGKILL, ${stored.length} stored, ` +
      `${receiver.received.length} deliveries received for ${deliveredIds().size} vehicles`
  )
  return stored
}

describe("faults: a server killed mid-burst, and its PostgreSQL stopped under load", () => {
  let pg: PrivatePostgres
  let receiver: Receiver
  const servers: Array<Serving> = []
  let env: Record<string, string>
  let token: string
  let orgId: string

  /** `opsplatform serve` on the private PostgreSQL, with the webhook worker. */
  const serve = async () => {
    const serving = await startServe(await freePort(), env)
    servers.push(serving)
    return serving
  }

  beforeAll(async () => {
    assertBuilt()
    pg = await privatePostgres(inject("privatePostgres"))
    env = { DATABASE_URL: pg.url, ...workerEnv }
    receiver = await startReceiver()
    const first = await serve()
    const org = json((await runCommand(["admin", "create-org", "--name", "Faults"], env)).stdout)
    orgId = org.id
    token = json((await runCommand([
      "admin",
      "create-key",
      "--org",
      orgId,
      "--env",
      "sandbox",
      "--kind",
      "api",
      "--scopes",
      "fleet:read fleet:write webhooks:read webhooks:write locations:read locations:write"
    ], env)).stdout).token
    const subscription = await request(`${first.url}/v1/webhooks`, "POST", token, {
      url: receiver.url,
      event_types: ["fleet_vehicle.created"]
    })
    expect(subscription.status).toBe(201)
    receiver.secrets = [subscription.json.data.secret]
  }, 180_000)

  afterAll(async () => {
    for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGKILL")
    await receiver?.close()
    await pg?.destroy()
  })

  it("SIGKILL during a burst of writes: after a restart every acknowledged write is there with its event delivered, nothing half-written", async () => {
    const stored = await killDuringBurst(servers[servers.length - 1]!, serve, token, receiver, "PostgreSQL")
    // Nothing half-written: each stored vehicle has exactly its one event in the outbox, and no event lacks its vehicle.
    const orphans = psql(
      pg.url,
      `SELECT count(*) FROM fleet_vehicles v WHERE v.organization_id = '${orgId}'
         AND (SELECT count(*) FROM outbox_events e WHERE e.organization_id = v.organization_id AND e.type = 'fleet_vehicle.created'
              AND e.data->>'id' = v.id::text) <> 1`
    )
    expect(orphans).toBe("0")
    const events = psql(pg.url, `SELECT count(*) FROM outbox_events WHERE organization_id = '${orgId}' AND type = 'fleet_vehicle.created'`)
    expect(Number(events)).toBe(stored.length)
  }, 180_000)

  it("PostgreSQL stopped and started under load: /readyz goes false then true, requests answer 503 in the envelope meanwhile, the worker resumes", async () => {
    const server = servers[servers.length - 1]!
    const statuses = new Map<number, number>()
    const refusals: Array<string> = []
    let running = true
    let n = 0
    const load = (async () => {
      while (running) {
        const i = n++
        const res = await request(`${server.url}/v1/locations`, i % 2 === 0 ? "GET" : "POST", token, i % 2 === 0 ? undefined : { name: `Load ${i}` })
          .catch((e: Error) => ({ status: 0, requestId: null, json: undefined, text: String(e) }))
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
        if (res.status >= 500 && (res.status !== 503 || res.json?.error?.code !== "unavailable" || res.json?.error?.requestId !== res.requestId)) {
          refusals.push(`${res.status} ${res.text.slice(0, 300)}`)
        }
        await new Promise((r) => setTimeout(r, 5))
      }
    })()
    const ready = async () => (await fetch(`${server.url}/readyz`)).status
    const waitReady = async (want: number) => {
      const deadline = Date.now() + 60_000
      while ((await ready()) !== want) {
        if (Date.now() > deadline) throw new Error(`/readyz never answered ${want}`)
        await new Promise((r) => setTimeout(r, 50))
      }
    }
    await new Promise((r) => setTimeout(r, 300))
    expect(await ready()).toBe(200)
    pg.stop()
    await waitReady(503)
    const notReady = await request(`${server.url}/readyz`, "GET", token)
    expect([notReady.status, notReady.json.error.code, notReady.json.error.requestId]).toEqual([503, "unavailable", notReady.requestId])
    // Down for a while under load.
    await new Promise((r) => setTimeout(r, 1500))
    const duringOutage = await request(`${server.url}/v1/fleet-vehicles`, "POST", token, { plate: "B 999 OUT", fuel_type: "diesel" })
    expect([duringOutage.status, duringOutage.json?.error?.code]).toEqual([503, "unavailable"])
    expect(duringOutage.json.error.requestId).toBe(duringOutage.requestId)
    // The OAuth token endpoint says so in RFC 6749's words.
    const tokenDuringOutage = await fetch(`${server.url}/api/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials&client_id=app_missing&client_secret=x"
    })
    expect([tokenDuringOutage.status, (await tokenDuringOutage.json()).error]).toEqual([503, "temporarily_unavailable"])
    pg.start()
    await waitReady(200)
    // Requests succeed again on the same process, with no restart.
    const deadline = Date.now() + 30_000
    let after = await request(`${server.url}/v1/fleet-vehicles`, "POST", token, { plate: "B 998 BAK", fuel_type: "diesel" })
    while (after.status !== 201 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100))
      after = await request(`${server.url}/v1/fleet-vehicles`, "POST", token, { plate: "B 998 BAK", fuel_type: "diesel" })
    }
    running = false
    await load
    expect(after.status).toBe(201)
    expect(server.child.exitCode).toBeNull()
    expect(refusals).toEqual([])
    expect(statuses.get(503) ?? 0).toBeGreaterThan(0)
    // The webhook worker picks up again by itself: the new vehicle's event arrives.
    await receiver.until((received) => received.some((r) => JSON.parse(r.body).data.id === after.json.data.id), 60_000)
    console.info(`faults: under an outage, ${JSON.stringify(Object.fromEntries(statuses))} (status: count)`)
  }, 180_000)
})

describe("faults: a server on the embedded database killed mid-burst", () => {
  const servers: Array<Serving> = []
  let dataDir: string
  let receiver: Receiver

  afterAll(async () => {
    for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGKILL")
    await receiver?.close()
    if (dataDir !== undefined) fs.rmSync(dataDir, { recursive: true, force: true })
  })

  it("SIGKILL during a burst of writes: after a restart on the same data directory every acknowledged write and its event are there", async () => {
    assertBuilt()
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "opsplatform-faults-"))
    // A live key (the demo organization's), so the receiver speaks https with the test CA.
    receiver = await startReceiver({ tls: true })
    const env = {
      ...workerEnv,
      DATABASE_URL: "",
      OPSPLATFORM_DATA_DIR: dataDir,
      OPSPLATFORM_WEBHOOKS_CA_FILE: receiverCertificateFile
    }
    const serve = async () => {
      const serving = await startServe(await freePort(), env)
      servers.push(serving)
      return serving
    }
    const first = await serve()
    const token = json(first.stdout()).demo.api_key as string
    const subscription = await request(`${first.url}/v1/webhooks`, "POST", token, {
      url: receiver.url,
      event_types: ["fleet_vehicle.created"]
    })
    expect(subscription.status).toBe(201)
    receiver.secrets = [subscription.json.data.secret]
    await killDuringBurst(first, serve, token, receiver, "embedded")
  }, 240_000)
})
