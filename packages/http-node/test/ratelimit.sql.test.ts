import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Exit, Layer, Redacted, Scope } from "effect"
import * as fs from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { inject } from "vitest"
import { RateLimiter } from "@opsplatform/core"
import { testDatabases } from "./support/databases.ts"

/**
 * Two connection pools stand for two server processes sharing one database:
 * together they must never admit more than the limit for one key.
 */
for (const db of testDatabases()) {
  describe(`RateLimiter across two pools (${db.name})`, () => {
    const scope = Effect.runSync(Scope.make())
    const limiters: Array<RateLimiter.RateLimiter["Service"]> = []
    let closeEmbedded = async () => {}

    beforeAll(async () => {
      let pool: () => Layer.Layer<PgClient.PgClient | import("effect/sql").SqlClient.SqlClient, unknown>
      if (db.name === "postgres") {
        pool = () => PgClient.layer({ url: Redacted.make(process.env.DATABASE_URL!), maxConnections: 4 })
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
  })
}
