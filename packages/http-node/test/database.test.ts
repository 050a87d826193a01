import { describe, expect, it } from "vitest"
import { databaseChoiceFromEnv, DEFAULT_POOL_SIZE, poolSize } from "../src/server/database.ts"

describe("DATABASE_POOL_SIZE", () => {
  it("sizes each process's PostgreSQL pool, 10 by default", () => {
    expect(databaseChoiceFromEnv({ DATABASE_URL: "postgres://db/x" })).toEqual({
      _tag: "Postgres",
      url: "postgres://db/x",
      maxConnections: DEFAULT_POOL_SIZE
    })
    expect(databaseChoiceFromEnv({ DATABASE_URL: "postgres://db/x", DATABASE_POOL_SIZE: "4" })).toMatchObject({ maxConnections: 4 })
  })

  it("refuses anything but an integer from 1 to 1000, naming the variable", () => {
    for (const bad of ["0", "-3", "2.5", "ten", "1001", "1e9"]) {
      expect(() => poolSize(bad)).toThrow(/DATABASE_POOL_SIZE must be an integer from 1 to 1000/)
    }
    expect(poolSize("1000")).toBe(1000)
  })
})
