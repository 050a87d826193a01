import { Effect, Stream } from "effect"
import { FetchHttpClient } from "effect/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Fixture } from "@opsplatform/testing"
import { type LossyProxy, startLossyProxy } from "@opsplatform/testing/lossyProxy"
import { makeClient, NotFoundError, paginate, UnauthorizedError } from "@opsplatform/http-node/api"
import { testDatabases } from "./support/databases.ts"
import { seedFixture, startTestServer, type TestServer } from "./support/server.ts"

/** The Effect client from the package's `api` subpath, against the real server. */
for (const db of testDatabases()) {
  describe(`the Effect client (${db.name})`, () => {
    let server: TestServer
    let proxy: LossyProxy
    let f: Fixture
    beforeAll(async () => {
      server = await startTestServer(db.choice())
      proxy = await startLossyProxy(server.url)
      f = await seedFixture(server, "Effect client org")
    })
    afterAll(async () => {
      await proxy?.close()
      await server?.close()
    })

    const run = <A, E>(body: (client: Effect.Success<ReturnType<typeof makeClient>>) => Effect.Effect<A, E>, token = f.tokens.api, baseUrl = server.url) =>
      Effect.runPromise(Effect.flatMap(makeClient({ baseUrl, token }), body).pipe(Effect.provide(FetchHttpClient.layer)))

    it("calls operations by group and name, typed both ways", async () => {
      const created = await run((client) => client.locations.create({ payload: { name: "Depot", code: "DEP" } }))
      expect(created.data).toMatchObject({ name: "Depot", code: "DEP" })
      const read = await run((client) => client.locations.get({ params: { id: created.data.id } }))
      expect(read.data.id).toBe(created.data.id)
    })

    it("fails with the error class of the status, its envelope inside", async () => {
      const missing = await run((client) =>
        Effect.flip(client.locations.get({ params: { id: "00000000-0000-7000-8000-000000000000" } }))
      )
      expect(missing).toBeInstanceOf(NotFoundError)
      expect((missing as NotFoundError).error).toMatchObject({ code: "not_found", requestId: expect.stringMatching(/^req_/) })
      const unauthorized = await run((client) => Effect.flip(client.locations.list({ query: {} })), "svc_key_nope")
      expect(unauthorized).toBeInstanceOf(UnauthorizedError)
    })

    it("walks every page by cursor", async () => {
      const g = await seedFixture(server, "Paging org")
      await run((client) => Effect.forEach([1, 2, 3, 4, 5], (n) => client.locations.create({ payload: { name: `Site ${n}` } })), g.tokens.api)
      const names = await run((client) =>
        Stream.runCollect(paginate((cursor) => client.locations.list({ query: { perPage: 2, ...(cursor === undefined ? {} : { cursor }) } }))), g.tokens.api)
      expect([...names].map((l) => l.name)).toEqual(["Site 5", "Site 4", "Site 3", "Site 2", "Site 1"])
    })

    it("retries a create whose response was lost with the same Idempotency-Key, so it runs once", async () => {
      const g = await seedFixture(server, "Retry org")
      proxy.loseResponses("POST")
      const before = proxy.seen.length
      const created = await run((client) => client.locations.create({ payload: { name: "Only once" } }), g.tokens.api, proxy.url)
      const posts = proxy.seen.slice(before).filter((r) => r.method === "POST")
      expect(posts.map((r) => r.lost)).toEqual([true, false])
      expect(posts[0]!.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/)
      expect(posts[1]!.idempotencyKey).toBe(posts[0]!.idempotencyKey)
      const all = await run((client) => client.locations.list({ query: {} }), g.tokens.api)
      expect(all.data.map((l) => l.id)).toEqual([created.data.id])
    })

    it("never retries a PATCH whose response was lost: the outcome is the caller's to check", async () => {
      const g = await seedFixture(server, "Patch org")
      const created = await run((client) => client.locations.create({ payload: { name: "Before" } }), g.tokens.api)
      proxy.loseResponses("PATCH")
      const before = proxy.seen.length
      const failure = await run((client) =>
        Effect.flip(client.locations.update({ params: { id: created.data.id }, payload: { name: "After" } })), g.tokens.api, proxy.url)
      expect(failure).toMatchObject({ _tag: "HttpClientError" })
      expect(proxy.seen.slice(before).filter((r) => r.method === "PATCH")).toHaveLength(1)
    })
  })
}
