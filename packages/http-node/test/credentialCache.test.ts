import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Credentials, Scopes } from "@opsplatform/core"
import type { Fixture } from "@opsplatform/testing"
import { isolatedDatabase, runOn, testDatabases } from "./support/databases.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"

/**
 * The credential cache (docs/decisions.md, "Credential cache"), as two server
 * processes on one database see it: A and B have their own caches and
 * listeners. Changes are made through A's core or straight in SQL, and B is
 * asked right after, with no wait.
 */
for (const db of testDatabases()) {
  describe(`credential cache across servers (${db.name})`, () => {
    let a: TestServer
    let b: TestServer
    let f: Fixture
    let url: string | undefined
    let drop: () => Promise<void>
    beforeAll(async () => {
      const isolated = await isolatedDatabase(db, "credcache")
      drop = isolated.drop
      url = isolated.choice._tag === "Postgres" ? isolated.choice.url : undefined
      a = await startTestServer(isolated.choice)
      // Embedded PGlite is one process's: B is the same server there.
      b = isolated.choice._tag === "Postgres" ? await startTestServer(isolated.choice) : a
      f = await seedFixture(a)
    }, 60_000)
    afterAll(async () => {
      if (b !== a) await b.close()
      await a.close()
      await drop()
    })

    const sql = (statement: string) => {
      if (url === undefined) throw new Error("SQL from outside needs PostgreSQL")
      return runOn(url, statement)
    }
    const issue = (scopes: ReadonlyArray<string> = Scopes.allScopes) =>
      a.run(Effect.flatMap(Credentials.Credentials, (c) => c.issue(f.live, { kind: "api_key", scopes, name: "cache test" })))
    const status = async (server: TestServer, token: string) => (await call(server, "GET", "/v1/locations", { token })).status
    /** How long B takes to answer `expected` for the token (polling every 2 ms), failing after `withinMs`. */
    const seenWithin = async (token: string, expected: number, withinMs: number) => {
      const start = performance.now()
      while (await status(b, token) !== expected) {
        if (performance.now() - start > withinMs) throw new Error(`B did not answer ${expected} within ${withinMs} ms`)
        await new Promise((resolve) => setTimeout(resolve, 2))
      }
      return performance.now() - start
    }
    /** Runs `work` with the change trigger off, so that only what a process does itself can evict. */
    const silently = async <A>(work: () => Promise<A>): Promise<A> => {
      if (url === undefined) return work()
      await sql("ALTER TABLE credentials DISABLE TRIGGER credentials_changed")
      try {
        return await work()
      } finally {
        await sql("ALTER TABLE credentials ENABLE TRIGGER credentials_changed")
      }
    }

    it("refuses a key on B at once after A revokes it, every time (30 keys, each used on B just before)", async () => {
      for (let i = 0; i < 30; i++) {
        const issued = await issue()
        expect(await status(b, issued.token)).toBe(200)
        expect(await status(b, issued.token)).toBe(200)
        await a.run(Effect.flatMap(Credentials.Credentials, (c) => c.revoke(f.live, issued.credential.id)))
        expect(await status(b, issued.token)).toBe(401)
      }
    }, 60_000)

    // What only PostgreSQL has: processes of their own, SQL from outside, a listener to lose.
    if (db.name === "postgres") {
      // Made outside any server process, a change reaches B when PostgreSQL delivers the announcement: milliseconds.
      it("hears a change made in SQL alone (narrowed scopes, then a deletion) within milliseconds", async () => {
        const issued = await issue()
        expect(await status(b, issued.token)).toBe(200)
        await sql(`UPDATE credentials SET scopes = '{members:read}' WHERE id = '${issued.credential.id}'`)
        expect(await seenWithin(issued.token, 403, 500)).toBeLessThan(500)
        await sql(`DELETE FROM credentials WHERE id = '${issued.credential.id}'`)
        expect(await seenWithin(issued.token, 401, 500)).toBeLessThan(500)
      })

      it("serves B from its cache: a revocation nobody announces is not seen by B, but is by A, which never cached the key", async () => {
        const issued = await issue()
        expect(await status(b, issued.token)).toBe(200)
        await silently(async () => {
          await sql(`UPDATE credentials SET revoked_at = now() WHERE id = '${issued.credential.id}'`)
          expect(await status(b, issued.token)).toBe(200)
          expect(await status(a, issued.token)).toBe(401)
        })
        // The next change announced about that credential evicts it.
        await sql(`UPDATE credentials SET name = 'announced' WHERE id = '${issued.credential.id}'`)
        expect(await seenWithin(issued.token, 401, 500)).toBeLessThan(500)
      })

      it("keeps nothing with OPSPLATFORM_CREDENTIAL_CACHE=off: a revocation nobody announces is refused at once", async () => {
        const choice = db.choice()
        if (choice._tag !== "Postgres" || url === undefined) throw new Error("PostgreSQL only")
        const c = await startTestServer({ ...choice, url, credentialCache: false })
        try {
          const issued = await issue()
          expect(await status(c, issued.token)).toBe(200)
          expect(await status(c, issued.token)).toBe(200)
          await silently(async () => {
            await sql(`UPDATE credentials SET revoked_at = now() WHERE id = '${issued.credential.id}'`)
            expect(await status(c, issued.token)).toBe(401)
          })
        } finally {
          await c.close()
        }
      })

      it("turns the cache off when the listener's connection is lost, and on again when it listens again", async () => {
        const issued = await issue()
        expect(await status(b, issued.token)).toBe(200)
        await sql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND query ILIKE 'LISTEN%opsplatform_credentials%' AND pid <> pg_backend_pid()`)
        // Lost: whatever B had cached is gone, and nothing is cached until it listens again.
        await silently(async () => {
          await sql(`UPDATE credentials SET revoked_at = now() WHERE id = '${issued.credential.id}'`)
          expect(await status(b, issued.token)).toBe(401)
        })
        // Listening again (it retries within a second): B caches again, shown by a silent revocation it does not see.
        let cachedAgain = false
        for (let attempt = 0; attempt < 50 && !cachedAgain; attempt++) {
          await new Promise((resolve) => setTimeout(resolve, 100))
          const next = await issue()
          expect(await status(b, next.token)).toBe(200)
          await silently(async () => {
            await sql(`UPDATE credentials SET revoked_at = now() WHERE id = '${next.credential.id}'`)
            cachedAgain = (await status(b, next.token)) === 200
          })
        }
        expect(cachedAgain).toBe(true)
      }, 30_000)
    }
  })
}
