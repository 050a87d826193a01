import { Context, Effect, Exit, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DeliveryRepo, DeliveryWorker, Ids, WebhookSettings } from "@opsplatform/core"
import type { Fixture } from "@opsplatform/testing"
import { coreLive } from "../src/server/app.ts"
import type { DatabaseChoice } from "../src/server/database.ts"
import { coreSettingsFrom } from "../src/config/Configuration.ts"
import { testConfiguration, testVariables } from "./support/config.ts"
import { assertBuilt, runCommand, spawnWorker } from "./support/cli.ts"
import { postgresUrl, testDatabases } from "./support/databases.ts"
import { type Receiver, startReceiver } from "./support/receiver.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"
import { deliveriesOf, eventually, publishEvent, subscribe, useTestWebhookSettings } from "./support/webhooks.ts"

useTestWebhookSettings({ stepMs: 200, timeoutMs: 2_000 })

const LOST = /worker sending this attempt stopped before its lease ran out/

/** A worker on its own connection pool, as another host would run it; stops when `close` runs. */
const startWorker = async (choice: DatabaseChoice, name: string, overrides: Partial<WebhookSettings.WebhookSettingsShape> = {}) => {
  const scope = Effect.runSync(Scope.make())
  const settings = {
    ...coreSettingsFrom(testVariables()).webhooks.settings,
    userAgent: `OpsPlatform-Webhooks/1.0 (${name})`,
    ...overrides
  }
  const context = await Effect.runPromise(Layer.buildWithScope(
    DeliveryWorker.DeliveryWorker.layer.pipe(
      Layer.provide(Layer.succeed(WebhookSettings.WebhookSettings, settings)),
      Layer.provideMerge(coreLive(choice)),
      Layer.provide(testConfiguration())
    ),
    scope
  ))
  const worker = Context.get(context, DeliveryWorker.DeliveryWorker)
  await Effect.runPromise(Effect.forkIn(worker.run, scope))
  return { close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

const uniqueIds = (received: ReadonlyArray<{ headers: Record<string, unknown> }>) =>
  new Set(received.map((r) => String(r.headers["webhook-id"])))

describe("a lease that runs out (pglite)", () => {
  const db = testDatabases()[0]!
  let server: TestServer
  let f: Fixture
  let receiver: Receiver
  beforeAll(async () => {
    server = await startTestServer(db.choice())
    f = await seedFixture(server)
    receiver = await startReceiver({ tls: false })
  })
  afterAll(async () => {
    await server.close()
    await receiver.close()
  })

  it("hands a delivery whose worker stopped to the next worker, counting the lost attempt", async () => {
    const sub = await subscribe(server, f.tokens.sandbox, receiver.url)
    receiver.secrets = [sub.secret]
    const eventId = await publishEvent(server, f.sandbox)
    // A worker claims it and stops before sending: its lease (here 300 ms) is all that is left.
    await server.run(Effect.gen(function*() {
      const repo = yield* DeliveryRepo.DeliveryRepo
      const ids = yield* Ids.Ids
      const now = Date.now()
      const claimed = yield* repo.claim({
        now: new Date(now + 1000).toISOString(),
        limit: 100,
        leaseUntil: new Date(now + 300).toISOString(),
        claimToken: yield* ids.uuid
      })
      expect(claimed.map((c) => c.eventId)).toContain(eventId)
    }))
    const worker = await server.run(Effect.gen(function*() {
      const w = yield* DeliveryWorker.DeliveryWorker
      return w
    }).pipe(Effect.provide(DeliveryWorker.DeliveryWorker.layer)))
    const drained = await server.run(worker.drain)
    expect(drained).toBe(0)
    // Nothing is due until the lease runs out; then the next drain takes the delivery over.
    const takenOver = await eventually(() => server.run(worker.drain), (attempts) => attempts > 0, 10_000)
    expect(takenOver).toBe(2)
    expect(receiver.received.map((r) => r.headers["webhook-id"])).toEqual([eventId])
    const [delivery] = await deliveriesOf(server, f.tokens.sandbox, sub.id)
    expect(delivery.status).toBe("succeeded")
    expect(delivery.attempts.map((a: any) => [a.number, a.status_code])).toEqual([[2, 204], [1, null]])
    expect(delivery.attempts[1].error).toMatch(LOST)
    expect(receiver.rejected).toEqual([])
  })
})

for (const db of testDatabases().filter((d) => d.name === "postgres")) {
  describe("workers sharing PostgreSQL", () => {
    let server: TestServer
    let f: Fixture
    const receivers: Array<Receiver> = []
    beforeAll(async () => {
      assertBuilt()
      server = await startTestServer(db.choice())
      f = await seedFixture(server)
    })
    afterAll(async () => {
      await server.close()
      await Promise.all(receivers.map((r) => r.close()))
    })

    it("two workers on two pools deliver each of 300 events exactly once when the receiver answers 2xx", async () => {
      const r = await startReceiver({ tls: false })
      receivers.push(r)
      const sub = await subscribe(server, f.tokens.sandbox, r.url)
      r.secrets = [sub.secret]
      const n = 300
      const events: Array<string> = []
      for (let i = 0; i < n; i++) events.push(await publishEvent(server, f.sandbox))
      const a = await startWorker(db.choice(), "worker A", { batchSize: 10 })
      const b = await startWorker(db.choice(), "worker B", { batchSize: 10 })
      try {
        await r.until((all) => uniqueIds(all).size === n, 60_000)
        await eventually(
          async () => {
            const res = await call(server, "GET", `/v1/webhooks/${sub.id}/deliveries?status=succeeded&perPage=1`, { token: f.tokens.sandbox })
            return res.json.meta.total as number
          },
          (total) => total === n,
          30_000
        )
      } finally {
        await a.close()
        await b.close()
      }
      expect(r.received).toHaveLength(n)
      expect([...uniqueIds(r.received)].sort()).toEqual([...events].sort())
      const agents = new Set(r.received.map((x) => String(x.headers["user-agent"])))
      expect(agents.has("OpsPlatform-Webhooks/1.0 (worker A)")).toBe(true)
      expect(agents.has("OpsPlatform-Webhooks/1.0 (worker B)")).toBe(true)
      const attempts = await server.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql`SELECT count(*)::int AS n, max(attempt_count)::int AS most FROM webhook_deliveries WHERE subscription_id = ${sub.id}`
      }))
      expect(attempts[0]).toEqual({ n, most: 1 })
      expect(r.rejected).toEqual([])
    }, 120_000)

    it("a worker process killed with SIGKILL mid-batch loses nothing: after a restart every event arrives", async () => {
      const r = await startReceiver({ tls: false })
      receivers.push(r)
      r.answer = () => ({ status: 200, delayMs: 150 })
      const sub = await subscribe(server, f.tokens.sandbox, r.url)
      r.secrets = [sub.secret]
      const n = 120
      const events: Array<string> = []
      for (let i = 0; i < n; i++) events.push(await publishEvent(server, f.sandbox))
      const env = {
        DATABASE_URL: postgresUrl(),
        OPSPLATFORM_WEBHOOKS_LEASE_MS: "3000",
        OPSPLATFORM_WEBHOOKS_BATCH_SIZE: "20",
        OPSPLATFORM_WEBHOOKS_CONCURRENCY: "20"
      }
      const first = await spawnWorker(env, "webhook worker started")
      await r.until((all) => all.length >= 30, 60_000)
      first.child.kill("SIGKILL")
      expect(await first.exited).toBeNull()
      const beforeRestart = uniqueIds(r.received).size
      expect(beforeRestart).toBeLessThan(n)
      const second = await spawnWorker(env, "webhook worker started")
      try {
        await r.until((all) => events.every((e) => uniqueIds(all).has(e)), 90_000)
        const deliveries = await eventually(
          () => deliveriesOf(server, f.tokens.sandbox, sub.id),
          (list) => list.length === n && list.every((d) => d.status === "succeeded"),
          30_000
        )
        // The attempts the killed worker had in flight were taken over after their lease, and say so.
        const lost = deliveries.filter((d) => d.attempts.some((a: any) => LOST.test(a.error ?? "")))
        expect(lost.length).toBeGreaterThan(0)
        for (const d of lost) expect(d.attempts[0].status_code).toBe(200)
      } finally {
        second.child.kill("SIGTERM")
        expect(await second.exited).toBe(0)
      }
      expect(r.rejected).toEqual([])
    }, 180_000)

    it("opsplatform worker refuses to start on PostgreSQL without the operator key, and says how to set it", async () => {
      const res = await runCommand(["worker"], { DATABASE_URL: postgresUrl(), OPSPLATFORM_SECRET_KEY: undefined })
      expect(res.code).toBe(1)
      expect(JSON.parse(res.stderr.trim().split("\n").pop()!).error.message).toMatch(/OPSPLATFORM_SECRET_KEY is not set/)
      const bad = await runCommand(["worker"], { DATABASE_URL: postgresUrl(), OPSPLATFORM_SECRET_KEY: "short" })
      expect(bad.code).toBe(1)
      expect(bad.stderr).toMatch(/must be 32 bytes/)
    }, 60_000)
  })
}

describe("opsplatform worker on the embedded database", () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "opsplatform-worker-"))
  const env = { OPSPLATFORM_DATA_DIR: dataDir, DATABASE_URL: undefined, OPSPLATFORM_SECRET_KEY: undefined }
  beforeAll(() => assertBuilt())
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))

  it("creates a private key file on first start, reuses it, and stops cleanly on SIGTERM", async () => {
    const first = await spawnWorker(env, "webhook worker started")
    const keyFile = path.join(dataDir, "secret.key")
    const key = fs.readFileSync(keyFile, "utf8")
    expect(Buffer.from(key.trim(), "base64")).toHaveLength(32)
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600)
    expect(first.stderr()).not.toContain(key.trim())
    first.child.kill("SIGTERM")
    expect(await first.exited).toBe(0)
    const second = await spawnWorker(env, "webhook worker started")
    second.child.kill("SIGTERM")
    expect(await second.exited).toBe(0)
    expect(fs.readFileSync(keyFile, "utf8")).toBe(key)
    // A key file others can read is refused, as ssh refuses such a private key.
    fs.chmodSync(keyFile, 0o644)
    const refused = await runCommand(["worker"], env)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("chmod 600")
  }, 120_000)
})
