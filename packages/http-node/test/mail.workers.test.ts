import { Effect, Exit, Layer, References, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { Ids, Mailboxes, MailboxRepo, MailSync, Tenancy } from "@opsplatform/core"
import { coreLive } from "../src/server/app.ts"
import type { DatabaseChoice } from "../src/server/database.ts"
import { MailSyncLive } from "../src/server/jobs/mail.ts"
import { assertBuilt, runCli } from "./support/cli.ts"
import { configureTests, testConfiguration } from "./support/config.ts"
import { postgresUrl, testDatabases } from "./support/databases.ts"
import { type Dovecot, dovecotFor, rawMessage } from "./support/dovecot.ts"

configureTests({ OPSPLATFORM_MAIL_ALLOW_PRIVATE: "true" })

const json = (text: string) => JSON.parse(text.trim().split("\n").filter((l) => l.startsWith("{")).pop()!)

/** A process's core and mail sync on its own connection pool, as another host would run them. */
const startProcess = async (
  choice: DatabaseChoice = { _tag: "Postgres", url: postgresUrl()!, maxConnections: 4 }
) => {
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(
    MailSyncLive.pipe(
      Layer.provideMerge(coreLive(choice)),
      Layer.provide(Layer.succeed(References.MinimumLogLevel, "Error")),
      Layer.provide(testConfiguration())
    ),
    scope
  ))
  return {
    run: <A>(effect: Effect.Effect<A, any, any>) => Effect.runPromise(Effect.provideContext(effect, context as any)) as Promise<A>,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

const dovecot: Dovecot = dovecotFor(inject("dovecot"))

describe("a mailbox another process holds (pglite)", () => {
  it("is skipped until its lease is given back, then synced", async () => {
    const one = await startProcess(testDatabases()[0]!.choice())
    try {
      const user = `held${process.pid}x${Date.now().toString(36)}`
      dovecot.addUser(user, `pw-${user}`)
      const { claim, id } = await one.run(Effect.gen(function*() {
        const org = yield* (yield* Tenancy.Tenancy).createOrganization({ name: "Held" })
        const mailbox = yield* (yield* Mailboxes.Mailboxes).create({ organizationId: org.id, environment: "sandbox" }, {
          address: `${user}@firm.example`,
          imap: { host: dovecot.host, port: dovecot.port, tls: "none", username: user, password: `pw-${user}` }
        })
        // Another process's claim, with its lease running for an hour.
        const [claim] = yield* (yield* MailboxRepo.MailboxRepo).claim({
          now: new Date().toISOString(),
          leaseUntil: new Date(Date.now() + 3_600_000).toISOString(),
          claimToken: yield* (yield* Ids.Ids).uuid,
          limit: 1,
          mailboxId: mailbox.id
        })
        return { claim: claim!, id: mailbox.id }
      }))
      const sync = () => one.run(Effect.flatMap(MailSync.MailSync, (s) => s.run({ mailboxId: id, ignoreSchedule: true })))
      expect((await sync()).mailboxes).toEqual([])
      await one.run(Effect.flatMap(MailboxRepo.MailboxRepo, (r) => r.release(claim)))
      expect((await sync()).mailboxes).toEqual([expect.objectContaining({ mailbox_id: id, result: "synced", first_sync: true })])
    } finally {
      await one.close()
    }
  }, 60_000)
})

// Two processes need a PostgreSQL server: the embedded database serves one process.
describe.runIf(postgresUrl() !== undefined)("mail sync in two processes on one PostgreSQL", () => {
  let a: Awaited<ReturnType<typeof startProcess>>
  let b: Awaited<ReturnType<typeof startProcess>>
  beforeAll(async () => {
    assertBuilt()
    a = await startProcess()
    b = await startProcess()
  }, 60_000)
  afterAll(async () => {
    // This Dovecot goes away with the file: no later process sharing the database should try its mailboxes.
    await a?.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`UPDATE mailboxes SET enabled = FALSE WHERE address LIKE '%@firm.example' AND imap_port = ${dovecot.port}`))
    await a?.close()
    await b?.close()
  })

  /** `n` organization mailboxes past their first sync, each with one new message in its inbox. */
  const mailboxesWithMail = async (n: number, tag: string) => {
    const org = await a.run(Effect.flatMap(Tenancy.Tenancy, (t) => t.createOrganization({ name: `Two processes ${tag}` })))
    const tenant = { organizationId: org.id, environment: "sandbox" as const }
    const ids: Array<string> = []
    for (let i = 0; i < n; i++) {
      const user = `${tag}${i}x${process.pid}x${Date.now().toString(36)}`
      dovecot.addUser(user, `pw-${user}`)
      const mailbox = await a.run(Effect.flatMap(Mailboxes.Mailboxes, (m) =>
        m.create(tenant, {
          address: `${user}@firm.example`,
          imap: { host: dovecot.host, port: dovecot.port, tls: "none", username: user, password: `pw-${user}` }
        })))
      ids.push(mailbox.id)
    }
    for (const id of ids) {
      const first = await a.run(Effect.flatMap(MailSync.MailSync, (s) => s.run({ mailboxId: id, ignoreSchedule: true })))
      expect(first.mailboxes[0]).toMatchObject({ result: "synced", first_sync: true })
    }
    for (let i = 0; i < n; i++) {
      const user = (await a.run(Effect.flatMap(Mailboxes.Mailboxes, (m) => m.get(tenant, ids[i]!)))).imap.username
      const client = await dovecot.connect(user)
      await client.append("INBOX", rawMessage({
        from: "client@client.example",
        to: `${user}@firm.example`,
        subject: `Order ${i}`,
        messageId: `order-${i}.${user}@client.example`
      }), [], new Date())
      await client.logout()
    }
    return { org, ids }
  }

  const eventsPerMessage = (organizationId: string) =>
    a.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ subject: string; n: number }>`SELECT data->>'subject' AS subject, count(*)::int AS n FROM outbox_events
        WHERE organization_id = ${organizationId} AND type = 'email.received' GROUP BY 1 ORDER BY 1`))

  it("the scheduled passes of two processes sync each due mailbox once between them, each message announced once", async () => {
    const { ids, org } = await mailboxesWithMail(12, "sched")
    await a.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`UPDATE mailboxes SET next_sync_at = NULL WHERE organization_id = ${org.id}`))
    const [fromA, fromB] = await Promise.all([
      a.run(Effect.flatMap(MailSync.MailSync, (s) => s.run())),
      b.run(Effect.flatMap(MailSync.MailSync, (s) => s.run()))
    ])
    const synced = [...fromA.mailboxes, ...fromB.mailboxes].filter((m) => m.organization_id === org.id)
    expect(synced.map((m) => m.mailbox_id).sort()).toEqual([...ids].sort())
    expect(synced.every((m) => m.result === "synced" && m.events === 1)).toBe(true)
    expect(await eventsPerMessage(org.id)).toEqual(ids.map((_, i) => ({ subject: `Order ${i}`, n: 1 })).sort((x, y) =>
      x.subject.localeCompare(y.subject)
    ))
  }, 120_000)

  it("two `opsplatform jobs run mail` processes announce each message once, and --mailbox syncs only that one", async () => {
    const { ids, org } = await mailboxesWithMail(6, "cli")
    const env = { DATABASE_URL: postgresUrl(), OPSPLATFORM_MAIL_ALLOW_PRIVATE: "true" }
    const [one, two] = await Promise.all([runCli(["jobs", "run", "mail"], env), runCli(["jobs", "run", "mail"], env)])
    expect(one.code, one.stderr).toBe(0)
    expect(two.code, two.stderr).toBe(0)
    const reports = [...json(one.stdout).mailboxes, ...json(two.stdout).mailboxes].filter((m: any) => m.organization_id === org.id)
    expect(new Set(reports.map((m: any) => m.mailbox_id))).toEqual(new Set(ids))
    expect(reports.reduce((n: number, m: any) => n + m.events, 0)).toBe(ids.length)
    expect((await eventsPerMessage(org.id)).map((r) => r.n)).toEqual(ids.map(() => 1))
    const single = await runCli(["jobs", "run", "mail", "--mailbox", ids[0]!], env)
    expect(single.code, single.stderr).toBe(0)
    expect(json(single.stdout).mailboxes).toEqual([
      expect.objectContaining({ mailbox_id: ids[0], result: "synced", first_sync: false, stored: 0, events: 0, error: null })
    ])
  }, 120_000)
})
