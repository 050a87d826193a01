import { afterAll, beforeAll } from "vitest"
import type { Fixture } from "@opsplatform/testing"
import type { TestDatabase } from "./databases.ts"
import { type Receiver, startReceiver } from "./receiver.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./server.ts"

/**
 * For one describe block: the real server with its background workers (so
 * events are delivered), a fixture organization, and a TLS webhook receiver;
 * `request` calls the API with the fixture's live key unless given another.
 * Read the parts inside tests: they exist once `beforeAll` has run.
 */
export const serverWithReceiver = (db: TestDatabase) => {
  let parts: { readonly server: TestServer; readonly f: Fixture; readonly receiver: Receiver } | undefined
  const started = () => {
    if (parts === undefined) throw new Error("serverWithReceiver: read the server inside a test")
    return parts
  }
  beforeAll(async () => {
    const server = await startTestServer(db.choice(), { background: true })
    parts = { server, f: await seedFixture(server), receiver: await startReceiver({ tls: true }) }
  })
  afterAll(async () => {
    await parts?.server.close()
    await parts?.receiver.close()
  })
  return {
    get server() {
      return started().server
    },
    get f() {
      return started().f
    },
    get receiver() {
      return started().receiver
    },
    request: (method: string, path: string, body?: unknown, token = started().f.tokens.api) =>
      call(started().server, method, path, { token, ...(body === undefined ? {} : { body }) })
  }
}
