import * as net from "node:net"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import type { Fixture } from "@opsplatform/testing"
import { testDatabases } from "./support/databases.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"

interface RawResponse {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

/** One HTTP/1.1 connection written by hand, so a test controls how much of a body is sent and reads answers in order. */
const connect = async (server: TestServer) => {
  const { port } = new URL(server.url)
  const socket = net.connect(Number(port), "127.0.0.1")
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject))
  let buffer = Buffer.alloc(0)
  let closed = false
  let wake: (() => void) | undefined
  socket.on("data", (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk])
    wake?.()
  })
  socket.on("close", () => {
    closed = true
    wake?.()
  })
  socket.on("error", () => {})
  const more = () => new Promise<void>((resolve) => (wake = resolve))
  return {
    write: (data: string | Buffer) => new Promise<void>((resolve) => socket.write(data, () => resolve())),
    /** The next response; fails when the connection closes first or nothing comes within `ms`. */
    response: async (ms = 5000): Promise<RawResponse> => {
      const deadline = setTimeout(() => wake?.(), ms)
      const started = Date.now()
      try {
        while (true) {
          const end = buffer.indexOf("\r\n\r\n")
          if (end >= 0) {
            const [statusLine, ...lines] = buffer.subarray(0, end).toString("latin1").split("\r\n")
            const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]))
            const length = Number(headers["content-length"] ?? 0)
            if (buffer.length >= end + 4 + length) {
              const body = buffer.subarray(end + 4, end + 4 + length).toString("utf8")
              buffer = buffer.subarray(end + 4 + length)
              return { status: Number(statusLine!.split(" ")[1]), headers, body }
            }
          }
          if (closed) throw new Error("the connection closed before a whole response arrived")
          if (Date.now() - started >= ms) throw new Error(`no response within ${ms} ms`)
          await more()
        }
      } finally {
        clearTimeout(deadline)
      }
    },
    closed: () => closed,
    destroy: () => socket.destroy()
  }
}

const head = (method: string, path: string, headers: Record<string, string>) =>
  `${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`

const DECLARED = 15 * 1024 * 1024

for (const db of testDatabases()) {
  describe(`the body is read only once the route and the credential allow it (${db.name})`, () => {
    let server: TestServer
    let f: Fixture

    beforeAll(async () => {
      server = await startTestServer(db.choice())
      f = await seedFixture(server)
    })
    /** Connections a test opened, closed after it whatever happened (an open one would hold the server's shutdown). */
    const opened: Array<{ destroy: () => void }> = []
    afterEach(() => {
      for (const c of opened.splice(0)) c.destroy()
    })
    afterAll(() => server.close())

    it("answers an unknown path, a wrong method, a missing or bad credential, a missing scope and an oversized JSON body before the body arrives", async () => {
      const cases: ReadonlyArray<readonly [string, string, Record<string, string>, number, string]> = [
        ["POST", "/v1/nowhere", { "content-type": "application/json" }, 404, "not_found"],
        ["PUT", "/v1/locations", { authorization: `Bearer ${f.tokens.api}`, "content-type": "application/json" }, 405, "method_not_allowed"],
        ["POST", "/v1/imports?entity=contacts", { "content-type": "application/json" }, 401, "unauthorized"],
        ["POST", "/v1/imports?entity=contacts", { "content-type": "text/csv" }, 401, "unauthorized"],
        ["POST", "/v1/imports?entity=contacts", { authorization: "Bearer svc_key_not-a-key", "content-type": "text/csv" }, 401, "unauthorized"],
        ["POST", "/v1/imports?entity=contacts", { authorization: `Bearer ${f.tokens.narrow}`, "content-type": "text/csv" }, 403, "insufficient_scope"],
        ["POST", "/v1/locations", { authorization: `Bearer ${f.tokens.api}`, "content-type": "application/json" }, 413, "payload_too_large"],
        // The import size is for CSV and multipart: a JSON body to the import endpoint has the API's 1 MiB.
        ["POST", "/v1/imports?entity=contacts", { authorization: `Bearer ${f.tokens.api}`, "content-type": "application/json" }, 413, "payload_too_large"]
      ]
      for (const [method, path, headers, status, code] of cases) {
        const connection = await connect(server)
        opened.push(connection)
        // 15 MB declared, 64 KiB sent: an answer now is an answer that did not wait for (or read) the rest.
        await connection.write(head(method, path, { ...headers, "content-length": String(DECLARED) }))
        await connection.write(Buffer.alloc(64 * 1024, "["))
        const response = await connection.response().catch((e: Error) => ({ status: 0, headers: {} as Record<string, string>, body: e.message }))
        expect([method, path, response.status]).toEqual([method, path, status])
        const json = JSON.parse(response.body)
        expect(json.error.code).toBe(code)
        expect(json.error.requestId).toBe(response.headers["x-request-id"])
        // The unread rest is not drained: the connection closes rather than carry it into a next request.
        expect(response.headers.connection).toBe("close")
        connection.destroy()
      }
    })

    it("keeps a connection usable after an answer that left a small body unread", async () => {
      const connection = await connect(server)
      opened.push(connection)
      const body = JSON.stringify({ name: "x".repeat(100_000) })
      const length = String(Buffer.byteLength(body))
      await connection.write(head("POST", "/v1/nowhere", { "content-type": "application/json", "content-length": length }) + body)
      expect((await connection.response()).status).toBe(404)
      await connection.write(head("POST", "/v1/imports?entity=contacts", { "content-type": "text/csv", "content-length": length }) + body)
      expect((await connection.response()).status).toBe(401)
      const small = JSON.stringify({ name: "Ok" })
      await connection.write(head("POST", "/v1/locations", {
        authorization: `Bearer ${f.tokens.api}`,
        "content-type": "application/json",
        "content-length": String(small.length)
      }) + small)
      const created = await connection.response()
      expect([created.status, JSON.parse(created.body).data.name]).toEqual([201, "Ok"])
      expect(connection.closed()).toBe(false)
      connection.destroy()
    })

    it("refuses a chunked JSON body past 1 MiB with 413 in the envelope, and still reads one within it", async () => {
      const big = await call(server, "POST", "/v1/locations", {
        token: f.tokens.api,
        rawBody: JSON.stringify({ name: "x".repeat(1_100_000) })
      })
      expect([big.status, big.json.error.code]).toEqual([413, "payload_too_large"])
      const connection = await connect(server)
      opened.push(connection)
      await connection.write(head("POST", "/v1/locations", {
        authorization: `Bearer ${f.tokens.api}`,
        "content-type": "application/json",
        "transfer-encoding": "chunked"
      }))
      const chunk = "x".repeat(256 * 1024)
      await connection.write(`${(9).toString(16)}\r\n{"name":"\r\n`)
      for (let i = 0; i < 5; i++) await connection.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)
      await connection.write(`2\r\n"}\r\n0\r\n\r\n`)
      const refused = await connection.response()
      expect([refused.status, JSON.parse(refused.body).error.code]).toEqual([413, "payload_too_large"])
      connection.destroy()
      const small = await connect(server)
      opened.push(small)
      await small.write(head("POST", "/v1/locations", {
        authorization: `Bearer ${f.tokens.api}`,
        "content-type": "application/json",
        "transfer-encoding": "chunked"
      }) + `e\r\n{"name":"Chk"}\r\n0\r\n\r\n`)
      const ok = await small.response()
      expect(ok.status).toBe(201)
      small.destroy()
    })
  })
}
