import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Effect } from "effect"
import * as fs from "node:fs"
import { describe, expect, inject, it } from "vitest"
import type {} from "@opsplatform/example-support"
import { programOn } from "../src/postgres.ts"

const operatorKey = Uint8Array.from({ length: 32 }, (_, i) => i)
const expected = { organization: "Acme Logistics", depot: "Main depot", expenses: ["Diesel, 60 l: 432.60 RON"] }

/** Core embedded on SQL: over PGlite's PostgreSQL wire protocol always, and on the PostgreSQL of DATABASE_URL when set. */
describe("examples/embed on PostgreSQL", () => {
  it("runs on a PostgreSQL server speaking the wire protocol (PGlite)", async () => {
    const db = await PGlite.create({ loadDataDir: new Blob([fs.readFileSync(inject("pgliteTemplate"))]) })
    const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 1 })
    await server.start()
    const { port } = (server as unknown as { server: { address(): { port: number } } }).server.address()
    try {
      const result = await Effect.runPromise(programOn({ url: `postgres://postgres@127.0.0.1:${port}/postgres`, operatorKey, maxConnections: 1 }))
      expect(result).toEqual(expected)
      // The rows are in the database, not in memory.
      const { rows } = await db.query<{ name: string }>("SELECT name FROM locations WHERE code = 'DEPOT'")
      expect(rows.map((r) => r.name)).toEqual(["Main depot"])
    } finally {
      await server.stop()
      await db.close()
    }
  })

  it.runIf(process.env.DATABASE_URL !== undefined)("runs on the PostgreSQL of DATABASE_URL", async () => {
    expect(await Effect.runPromise(programOn({ url: process.env.DATABASE_URL!, operatorKey, maxConnections: 2 }))).toEqual(expected)
  })
})
