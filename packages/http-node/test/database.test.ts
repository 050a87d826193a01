import { describe, expect, it } from "vitest"
import { databaseChoiceFromEnv } from "../src/config/Configuration.ts"
import { DEFAULT_POOL_SIZE } from "../src/config/variables.ts"

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
      expect(() => databaseChoiceFromEnv({ DATABASE_URL: "postgres://db/x", DATABASE_POOL_SIZE: bad })).toThrow(
        /DATABASE_POOL_SIZE must be an integer from 1 to 1000/
      )
    }
    expect(databaseChoiceFromEnv({ DATABASE_URL: "postgres://db/x", DATABASE_POOL_SIZE: "1000" })).toMatchObject({ maxConnections: 1000 })
  })
})

describe("OPSPLATFORM_CREDENTIAL_CACHE", () => {
  it("is on unless set to off, and refuses any other value, naming the variable", () => {
    expect(databaseChoiceFromEnv({ DATABASE_URL: "postgres://db/x" })).toMatchObject({ credentialCache: true })
    expect(databaseChoiceFromEnv({ DATABASE_URL: "postgres://db/x", OPSPLATFORM_CREDENTIAL_CACHE: "on" })).toMatchObject({ credentialCache: true })
    expect(databaseChoiceFromEnv({ DATABASE_URL: "postgres://db/x", OPSPLATFORM_CREDENTIAL_CACHE: "off" })).toMatchObject({ credentialCache: false })
    for (const bad of ["false", "0", "OFF", "no"]) {
      expect(() => databaseChoiceFromEnv({ DATABASE_URL: "postgres://db/x", OPSPLATFORM_CREDENTIAL_CACHE: bad })).toThrow(
        /OPSPLATFORM_CREDENTIAL_CACHE must be "on" or "off"/
      )
    }
  })
})
