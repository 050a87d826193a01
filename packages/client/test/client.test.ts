import { type Fixture, type RunningServer, startServer } from "@opsplatform/example-support"
import { type LossyProxy, startLossyProxy } from "@opsplatform/testing/lossyProxy"
import { readFileSync } from "node:fs"
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest"
import { generate, generatedFile } from "../scripts/generate.ts"
import {
  ApiError,
  BadRequestError,
  ConnectionError,
  createClient,
  ForbiddenError,
  isApiError,
  NotFoundError,
  RateLimitedError,
  UnauthorizedError
} from "../src/index.ts"

let server: RunningServer
let proxy: LossyProxy
let f: Fixture

beforeAll(async () => {
  server = await startServer({ background: false })
  proxy = await startLossyProxy(server.url)
  f = await server.seed("Client org")
})
afterAll(async () => {
  await proxy?.close()
  await server?.close()
})

const UNKNOWN = "00000000-0000-7000-8000-000000000000"

describe("the generated types", () => {
  it("are what openapi-typescript makes of the document the server serves (regenerate: npm run generate -w @opsplatform/client)", async () => {
    const served = await (await fetch(`${server.url}/v1/openapi.json`)).json() as Record<string, unknown>
    const checkedIn = readFileSync(generatedFile, "utf8")
    const fresh = await generate(served)
    expect(
      fresh === checkedIn,
      "packages/client/src/openapi.ts differs from the served OpenAPI document: run `npm run generate -w @opsplatform/client` and commit the result"
    ).toBe(true)
    // Every operation of the document is a typed path and method of the client.
    const operations = Object.entries(served.paths as Record<string, Record<string, unknown>>).flatMap(([p, item]) =>
      Object.keys(item).map((method) => `${method} ${p}`))
    expect(operations.length).toBeGreaterThan(50)
    for (const op of operations) {
      const [method, p] = op.split(" ")
      expect(checkedIn, op).toMatch(new RegExp(`"${p!.replace(/[{}]/g, "\\$&")}": \\{[^]*?\\n        ${method}: operations\\[`))
    }
  })
})

describe("calls", () => {
  it("return the envelope's data, typed by path and method", async () => {
    const ops = createClient({ baseUrl: server.url, token: f.tokens.api })
    const created = await ops.post("/v1/locations", { body: { name: "Depot", code: "DEP", vertical_type: "warehouse" } })
    expectTypeOf(created.name).toEqualTypeOf<string>()
    expect(created).toMatchObject({ name: "Depot", code: "DEP", vertical_type: "warehouse" })
    const read = await ops.get("/v1/locations/{id}", { params: { path: { id: created.id } } })
    expect(read.id).toBe(created.id)
    const updated = await ops.patch("/v1/locations/{id}", { params: { path: { id: created.id } }, body: { name: "Main depot" } })
    expect(updated.name).toBe("Main depot")
    expect(await ops.delete("/v1/locations/{id}", { params: { path: { id: created.id } } })).toEqual({ id: created.id, deleted: true })
  })

  it("take the token from a function, for credentials that change (OAuth access tokens)", async () => {
    let calls = 0
    const ops = createClient({ baseUrl: server.url, token: () => (calls++, Promise.resolve(f.tokens.api)) })
    await ops.get("/v1/locations")
    await ops.get("/v1/locations")
    expect(calls).toBe(2)
  })
})

describe("errors", () => {
  const ops = () => createClient({ baseUrl: server.url, token: f.tokens.api })

  it("throw the class of the status with the envelope's code, message and request id", async () => {
    const error = await ops().get("/v1/locations/{id}", { params: { path: { id: UNKNOWN } } }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(NotFoundError)
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({ status: 404, code: "not_found", requestId: expect.stringMatching(/^req_/) })
    expect(isApiError(error, "not_found")).toBe(true)
    expect(isApiError(error, "conflict")).toBe(false)
  })

  it("carry one detail per failing field on validation_failed", async () => {
    const error = await ops().post("/v1/locations", { body: { name: "" } }).catch((e: unknown) => e) as BadRequestError
    expect(error).toBeInstanceOf(BadRequestError)
    expect(error.code).toBe("validation_failed")
    expect(error.details.map((d) => d.field)).toContain("name")
  })

  it("tell a bad token from a missing scope", async () => {
    const bad = await createClient({ baseUrl: server.url, token: "svc_key_nope" }).get("/v1/locations").catch((e: unknown) => e)
    expect(bad).toBeInstanceOf(UnauthorizedError)
    const narrow = await createClient({ baseUrl: server.url, token: f.tokens.narrow }).get("/v1/locations").catch((e: unknown) => e)
    expect(narrow).toBeInstanceOf(ForbiddenError)
    expect((narrow as ForbiddenError).code).toBe("insufficient_scope")
  })

  it("a server that cannot be reached is a ConnectionError, after the retries", async () => {
    const closed = http.createServer()
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve))
    const { port } = closed.address() as { port: number }
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const error = await createClient({ baseUrl: `http://127.0.0.1:${port}`, token: "t", retryDelayMs: 1 }).get("/v1/locations").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ConnectionError)
    expect((error as Error).message).toContain("GET /v1/locations got no answer")
  })
})

describe("pagination", () => {
  it("walks every page by cursor, and every item", async () => {
    const g = await server.seed("Paging org")
    const ops = createClient({ baseUrl: server.url, token: g.tokens.api })
    for (const n of [1, 2, 3, 4, 5]) await ops.post("/v1/locations", { body: { name: `Site ${n}` } })
    const pages = []
    for await (const page of ops.pages("/v1/locations", { params: { query: { perPage: "2" } } })) pages.push(page)
    expect(pages.map((p) => p.data.map((l) => l.name))).toEqual([["Site 5", "Site 4"], ["Site 3", "Site 2"], ["Site 1"]])
    expect(pages.map((p) => p.meta.nextCursor === null)).toEqual([false, false, true])
    const names = []
    for await (const location of ops.list("/v1/locations", { params: { query: { perPage: "2", page: "3" } } })) names.push(location.name)
    expect(names).toEqual(["Site 5", "Site 4", "Site 3", "Site 2", "Site 1"])
  })
})

describe("retries", () => {
  it("resend a POST whose response was lost with the same Idempotency-Key: it runs once", async () => {
    const g = await server.seed("Retry org")
    const ops = createClient({ baseUrl: proxy.url, token: g.tokens.api, retryDelayMs: 1 })
    proxy.loseResponses("POST")
    const before = proxy.seen.length
    const created = await ops.post("/v1/locations", { body: { name: "Only once" } })
    const posts = proxy.seen.slice(before)
    expect(posts.map((r) => r.lost)).toEqual([true, false])
    expect(posts[0]!.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/)
    expect(posts[1]!.idempotencyKey).toBe(posts[0]!.idempotencyKey)
    const all = await ops.get("/v1/locations")
    expect(all.map((l) => l.id)).toEqual([created.id])
  })

  it("keep an Idempotency-Key the caller set", async () => {
    const g = await server.seed("Own key org")
    const ops = createClient({ baseUrl: proxy.url, token: g.tokens.api, retryDelayMs: 1 })
    const before = proxy.seen.length
    const first = await ops.post("/v1/locations", { body: { name: "Keyed" }, headers: { "Idempotency-Key": "order-42" } })
    const again = await ops.post("/v1/locations", { body: { name: "Keyed" }, headers: { "Idempotency-Key": "order-42" } })
    expect(again.id).toBe(first.id)
    expect(proxy.seen.slice(before).map((r) => r.idempotencyKey)).toEqual(["order-42", "order-42"])
  })

  it("never resend a PATCH whose outcome is unknown", async () => {
    const g = await server.seed("Patch org")
    const ops = createClient({ baseUrl: proxy.url, token: g.tokens.api, retryDelayMs: 1 })
    const created = await ops.post("/v1/locations", { body: { name: "Before" } })
    proxy.loseResponses("PATCH")
    const before = proxy.seen.length
    const error = await ops.patch("/v1/locations/{id}", { params: { path: { id: created.id } }, body: { name: "After" } }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ConnectionError)
    expect(proxy.seen.slice(before)).toHaveLength(1)
  })

  describe("against answers that say to wait", () => {
    let answers: Array<{ status: number; headers?: Record<string, string> }> = []
    let received: Array<{ method: string; at: number }> = []
    let upstream: http.Server
    let url: string
    beforeAll(async () => {
      upstream = http.createServer((req, res) => {
        received.push({ method: req.method!, at: Date.now() })
        const next = answers.shift() ?? { status: 200 }
        const body = next.status === 200
          ? { data: [], error: null, meta: { page: 1, perPage: 25, total: 0, totalPages: 0, nextCursor: null } }
          : { data: null, error: { code: next.status === 429 ? "rate_limited" : "unavailable", message: "wait", requestId: "req_x", ...(next.status === 429 ? { retryAfterSec: 1 } : {}) } }
        res.writeHead(next.status, { "content-type": "application/json", ...next.headers }).end(JSON.stringify(body))
      })
      await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve))
      url = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`
    })
    afterAll(() => new Promise<void>((resolve) => upstream.close(() => resolve())))

    it("wait as long as Retry-After says on 429, then succeed", async () => {
      answers = [{ status: 429, headers: { "retry-after": "1" } }]
      received = []
      const page = await createClient({ baseUrl: url, token: "t", retryDelayMs: 1 }).get("/v1/locations")
      expect(page).toEqual([])
      expect(received).toHaveLength(2)
      expect(received[1]!.at - received[0]!.at).toBeGreaterThanOrEqual(950)
    })

    it("give up after maxRetries and throw the last answer's error", async () => {
      answers = [{ status: 503 }, { status: 503 }, { status: 503 }, { status: 503 }]
      received = []
      const error = await createClient({ baseUrl: url, token: "t", retryDelayMs: 1, maxRetries: 2 }).get("/v1/locations").catch((e: unknown) => e)
      expect(received).toHaveLength(3)
      expect(error).toMatchObject({ status: 503, code: "unavailable", name: "ServerError" })
    })

    it("throw a 429 at once when Retry-After is longer than worth waiting", async () => {
      answers = [{ status: 429, headers: { "retry-after": "3600" } }]
      received = []
      const error = await createClient({ baseUrl: url, token: "t" }).get("/v1/locations").catch((e: unknown) => e)
      expect(error).toBeInstanceOf(RateLimitedError)
      expect((error as RateLimitedError).retryAfterSec).toBe(1)
      expect(received).toHaveLength(1)
    })
  })
})
