import { describe, expect, it } from "vitest"
import { credentialCacheSwitch, databaseChoiceFromEnv, DEFAULT_POOL_SIZE, poolSize } from "../src/server/database.ts"

describe("DATABASE_POOL_SIZE", () => {
  it("sizes each process's PostgreSQL pool, 10 by default", () => {
    expect(databaseChoiceFromEnv({ DATABASE_URL: "postgres://db/x" })).toEqual({
      _tag: "Postgres",
      url: "postgres://db/x",
      maxConnections: DEFAULT_POOL_SIZE,
      credentialCache: true
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

describe("OPSPLATFORM_CREDENTIAL_CACHE", () => {
  it("is on unless set to off, and refuses any other value, naming the variable", () => {
    expect(databaseChoiceFromEnv({ DATABASE_URL: "postgres://db/x" })).toMatchObject({ credentialCache: true })
    expect(databaseChoiceFromEnv({ DATABASE_URL: "postgres://db/x", OPSPLATFORM_CREDENTIAL_CACHE: "on" })).toMatchObject({ credentialCache: true })
    expect(databaseChoiceFromEnv({ DATABASE_URL: "postgres://db/x", OPSPLATFORM_CREDENTIAL_CACHE: "off" })).toMatchObject({ credentialCache: false })
    for (const bad of ["false", "0", "OFF", "no"]) {
      expect(() => credentialCacheSwitch(bad)).toThrow(/OPSPLATFORM_CREDENTIAL_CACHE must be "on" or "off"/)
    }
  })
})
