import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { Credentials, Scopes, Tenancy } from "@opsplatform/core"
import { program } from "../src/core.ts"
import { startHost } from "../src/mount.ts"

describe("examples/embed", () => {
  it("uses core services from a plain script on memory storage", async () => {
    const result = await Effect.runPromise(program)
    expect(result).toEqual({ organization: "Acme Logistics", depot: "Main depot", expenses: ["Diesel, 60 l: 432.60 RON"] })
  })

  it("mounts the API's web handler in a plain Node http server beside the host's own routes", async () => {
    const host = await startHost(0, { database: { _tag: "EmbeddedMemory" } })
    try {
      expect(await (await fetch(`${host.url}/hello`)).text()).toBe("the host's own route\n")
      expect((await (await fetch(`${host.url}/api/healthz`)).json()).data.status).toBe("ok")
      const unauthorized = await fetch(`${host.url}/api/v1/locations`)
      expect(unauthorized.status).toBe(401)
      expect(unauthorized.headers.get("x-request-id")).toMatch(/^req_/)
      expect((await unauthorized.json()).error.code).toBe("unauthorized")
    } finally {
      await host.close()
    }
  }, 60_000)
})
