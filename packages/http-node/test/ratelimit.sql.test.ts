import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Exit, Layer, Redacted, Scope } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { inject } from "vitest"
import { RateLimiter } from "@opsplatform/core"
import { postgresUrl, testDatabases } from "./support/databases.ts"

/**
 * Two connection pools stand for two server processes sharing one database:
 * together they must never admit more than the limit for one key, in any
 * window-long span.
 */
for (const db of testDatabases()) {
  describe(`RateLimiter across two pools (${db.name})`, () => {
    const scope = Effect.runSync(Scope.make())
    const limiters: Array<RateLimiter.RateLimiter["Service"]> = []
    let closeEmbedded = async () => {}

    beforeAll(async () => {
      let pool: () => Layer.Layer<PgClient.PgClient | import("effect/sql").SqlClient.SqlClient, unknown>
      if (db.name === "postgres") {
        pool = () => PgClient.layer({ url: Redacted.make(postgresUrl()!), maxConnections: 4 })
      } else {
        const pglite = await PGlite.create({ loadDataDir: new Blob([fs.readFileSync(inject("pgliteTemplate"))]) })
        const socket = new PGLiteSocketServer({ db: pglite, host: "127.0.0.1", port: 0, maxConnections: 8 })
        await socket.start()
        const port = (socket as unknown as { server: { address(): { port: number } } }).server.address().port
        pool = () => PgClient.layer({ host: "127.0.0.1", port, username: "postgres", database: "postgres", maxConnections: 4 })
        closeEmbedded = async () => {
          await socket.stop()
          await pglite.close()
        }
      }
      for (let i = 0; i < 2; i++) {
        const context = await Effect.runPromise(Layer.buildWithScope(RateLimiter.RateLimiter.layerSql.pipe(Layer.provide(pool())), scope))
        limiters.push(Context.get(context, RateLimiter.RateLimiter))
      }
    })
    afterAll(async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await closeEmbedded()
    })

    it("never admits more than the limit in total", async () => {
      const key = `two-pools:${crypto.randomUUID()}`
      const policy = { name: "test", limit: 25, windowSeconds: 3600 }
      const burst = (limiter: RateLimiter.RateLimiter["Service"]) =>
        Effect.forEach(Array.from({ length: 40 }), () => limiter.consume(key, policy), { concurrency: 4 })
      const [a, b] = await Effect.runPromise(Effect.all([burst(limiters[0]!), burst(limiters[1]!)], { concurrency: 2 }))
      const admitted = [...a!, ...b!].filter((d) => d.allowed)
      expect(admitted.length).toBe(25)
      // Each admission saw its own place in the count: no two callers were told the same remainder.
      expect(new Set(admitted.map((d) => d.remaining)).size).toBe(25)
      // Both pools took part.
      expect(a!.some((d) => d.allowed) && b!.some((d) => d.allowed)).toBe(true)
    })

    it("close the window edge: a burst just before a minute turns and one just after share one limit", async () => {
      const key = `edge:${crypto.randomUUID()}`
      const policy = { name: "heavy", limit: 30, windowSeconds: 60 }
      const burst = Effect.all(
        limiters.map((limiter) => Effect.forEach(Array.from({ length: 50 }), () => limiter.consume(key, policy), { concurrency: 4 })),
        { concurrency: 2 }
      ).pipe(Effect.map((answers) => answers.flat().filter((d) => d.allowed).length))
      // 12:00:58.5, 12:01:00.5 (a fixed window would open here), then a minute after the first burst.
      const start = Date.UTC(2026, 5, 1, 12, 0, 58, 500)
      const admitted = await Effect.runPromise(Effect.gen(function*() {
        const counts: Array<number> = []
        for (const at of [start, start + 2_000, start + 59_000, start + 60_001]) {
          yield* TestClock.setTime(at)
          counts.push(yield* burst)
        }
        return counts
      }).pipe(Effect.provide(TestClock.layer())))
      expect(admitted).toEqual([30, 0, 0, 30])
    })
  })
}
