import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { ImapFlow } from "imapflow"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { MailSync } from "@opsplatform/core"
import type { Fixture } from "@opsplatform/testing"
import { MailSyncLive } from "../src/server/jobs/mail.ts"
import { testDatabases } from "./support/databases.ts"
import { type Dovecot, type RawMessage, dovecotFor, rawMessage } from "./support/dovecot.ts"
import { type Receiver, receiverCertificateFile, startReceiver, verifyWith } from "./support/receiver.ts"
import { configureTests } from "./support/config.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"
import { eventually, subscribe, useTestWebhookSettings } from "./support/webhooks.ts"

useTestWebhookSettings({ stepMs: 200 })
// Dovecot serves TLS with the test certificate, which the sync trusts as an operator's private CA.
configureTests({ OPSPLATFORM_MAIL_ALLOW_PRIVATE: "true", OPSPLATFORM_MAIL_CA_FILE: receiverCertificateFile })

const HOUR = 60 * 60 * 1000
const SPEC_FIELDS = [
  "object",
  "id",
  "message_id",
  "mailbox",
  "recipient",
  "from",
  "subject",
  "received_at",
  "size_bytes",
  "has_attachments",
  "organizationId"
].sort()

const dovecot: Dovecot = dovecotFor(inject("dovecot"))
let users = 0

/** A Dovecot user and its signed-in client, as the mail server and other clients that put messages in place. */
const newImapUser = async (prefix: string) => {
  const user = `${prefix}${++users}x${process.pid}x${Date.now().toString(36)}`
  dovecot.addUser(user, `pw-${user}`)
  const client = await dovecot.connect(user)
  return { user, client, address: `${user}@firm.example`, alias: `sales.${user}@firm.example` }
}

const drop = (client: ImapFlow, folder: string, message: RawMessage, options: { flags?: Array<string>; at?: Date } = {}) =>
  client.append(folder, rawMessage(message), options.flags ?? [], options.at ?? new Date())

const inbound = (subject: string, extra: Partial<RawMessage> = {}): RawMessage => ({
  from: "Ana Pop <ana@client.example>",
  to: "office@firm.example",
  subject,
  messageId: `${subject.replace(/\W+/g, "-")}.${Math.random().toString(36).slice(2)}@client.example`,
  ...extra
})

for (const db of testDatabases()) {
  describe(`email.received from a real Dovecot (${db.name})`, () => {
    let server: TestServer
    let f: Fixture
    let receiver: Receiver
    const clients: Array<ImapFlow> = []

    beforeAll(async () => {
      // Syncs run on demand here, so each rule is read at a known moment; the last describe runs them on the interval.
      server = await startTestServer(db.choice(), { background: true, env: { OPSPLATFORM_MAIL_INTERVAL_SEC: "3600" } })
      f = await seedFixture(server)
      receiver = await startReceiver()
      const sub = await subscribe(server, f.tokens.sandbox, receiver.url, ["email.received"])
      receiver.secrets = [sub.secret]
    }, 60_000)
    afterAll(async () => {
      await Promise.all(clients.map((c) => c.logout().catch(() => undefined)))
      // This Dovecot goes away with the file: no later process sharing the database should try its mailboxes.
      await server?.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`UPDATE mailboxes SET enabled = FALSE WHERE organization_id = ${f.organizationId}`))
      await server?.close()
      await receiver?.close()
    })

    const imapUser = async (prefix: string) => {
      const u = await newImapUser(prefix)
      clients.push(u.client)
      return u
    }

    const register = async (u: { user: string; address: string; alias: string }, extra: Record<string, unknown> = {}) => {
      const res = await call(server, "POST", "/v1/mailboxes", {
        token: f.tokens.sandbox,
        body: {
          address: u.address,
          aliases: [u.alias],
          imap: { host: dovecot.host, port: dovecot.port, tls: "none", username: u.user, password: `pw-${u.user}` },
          ...extra
        }
      })
      expect(res.status, res.text).toBe(201)
      return res.json.data.id as string
    }

    /** The operator's on-demand sync of one mailbox (`opsplatform jobs run mail --mailbox`), in the server's process. */
    const sync = async (mailboxId: string) => {
      const summary = await server.run(
        Effect.flatMap(MailSync.MailSync, (s) => s.run({ mailboxId, ignoreSchedule: true })).pipe(Effect.provide(MailSyncLive))
      )
      expect(summary.mailboxes.map((m) => m.mailbox_id)).toEqual([mailboxId])
      return summary.mailboxes[0]!
    }

    const eventsOf = (mailboxId: string) =>
      receiver.received.map((r) => JSON.parse(r.body)).filter((b) => b.data.mailbox === mailboxId)

    /** Waits for the events of `subjects` and checks that nothing else of the mailbox arrived. */
    const expectOnly = async (mailboxId: string, subjects: ReadonlyArray<string>) => {
      await receiver.until(() => subjects.every((s) => eventsOf(mailboxId).some((e) => e.data.subject === s)), 15_000)
      expect(eventsOf(mailboxId).map((e) => e.data.subject).sort()).toEqual([...subjects].sort())
      expect(receiver.rejected).toEqual([])
    }

    it("records the history present at the first synchronization silently", async () => {
      const u = await imapUser("history")
      await drop(u.client, "INBOX", inbound("Old news in the inbox"))
      await u.client.mailboxCreate("Projects")
      await drop(u.client, "Projects", inbound("Old news in a folder"))
      const id = await register(u)
      const first = await sync(id)
      expect(first).toMatchObject({ result: "synced", first_sync: true, stored: 2, events: 0 })
      await drop(u.client, "INBOX", inbound("First new message"))
      const second = await sync(id)
      expect(second).toMatchObject({ result: "synced", first_sync: false, stored: 1, events: 1 })
      await expectOnly(id, ["First new message"])
      const mailbox = await call(server, "GET", `/v1/mailboxes/${id}`, { token: f.tokens.sandbox })
      expect(mailbox.json.data.last_synced_at).not.toBeNull()
      expect(mailbox.json.data.last_error).toBeNull()
    })

    it("announces a new inbox message once, signed, with exactly the spec's fields and nothing of its body, cc, bcc or attachments", async () => {
      const u = await imapUser("fields")
      const id = await register(u)
      await sync(id)
      const appended = await drop(u.client, "INBOX", inbound("Quote request", {
        to: `Office <${u.address}>`,
        cc: "Carol Cc <carol.cc@partner.example>",
        bcc: "bert.bcc@partner.example",
        deliveredTo: u.alias.toUpperCase(),
        body: "SECRET-BODY-TEXT please quote 40 pallets",
        attachment: "confidential-prices.pdf"
      }))
      await sync(id)
      await expectOnly(id, ["Quote request"])
      const [delivery] = receiver.received.filter((r) => JSON.parse(r.body).data.mailbox === id)
      expect(verifyWith(receiver.secrets[0]!, delivery!.headers, delivery!.body)).toBe(true)
      const body = JSON.parse(delivery!.body)
      expect(Object.keys(body.data).sort()).toEqual(SPEC_FIELDS)
      const lock = await u.client.getMailboxLock("INBOX")
      const [onServer] = await u.client.fetchAll(String(appended.uid), { size: true, envelope: true }, { uid: true }).finally(() => lock.release())
      expect(body).toMatchObject({
        id: `evt_${body.data.id.replace(/-/g, "")}`,
        type: "email.received",
        environment: "sandbox",
        data: {
          object: "email_message",
          message_id: onServer!.envelope!.messageId!.replace(/^<|>$/g, ""),
          mailbox: id,
          recipient: u.alias,
          from: "ana@client.example",
          subject: "Quote request",
          size_bytes: onServer!.size,
          has_attachments: true,
          organizationId: f.organizationId
        }
      })
      expect(body.id).toMatch(/^evt_[0-9a-f]{32}$/)
      expect(delivery!.headers["webhook-id"]).toBe(body.id)
      expect(Date.parse(body.data.received_at)).toBeGreaterThan(Date.now() - 60_000)
      // The keys are exactly the spec's (no body, snippet, cc or bcc field); no value carries them either.
      for (const leaked of ["SECRET-BODY-TEXT", "pallets", "carol", "bert", "confidential-prices", ".pdf"]) {
        expect(delivery!.body.toLowerCase()).not.toContain(leaked.toLowerCase())
      }
    })

    it("announces messages of a custom folder, also of one created after the first sync", async () => {
      const u = await imapUser("custom")
      await u.client.mailboxCreate("Clients")
      const id = await register(u)
      await sync(id)
      await drop(u.client, "Clients", inbound("Filed by a rule"))
      await u.client.mailboxCreate("Suppliers/Acme")
      await drop(u.client, "Suppliers/Acme", inbound("In a new folder"))
      expect(await sync(id)).toMatchObject({ events: 2 })
      await expectOnly(id, ["Filed by a rule", "In a new folder"])
    })

    it("announces nothing from spam, trash, drafts or sent, read by special-use or by name", async () => {
      const u = await imapUser("excluded")
      await u.client.mailboxCreate("Spam")
      await u.client.mailboxCreate("Sent Items")
      await u.client.mailboxCreate("Deleted Items")
      const id = await register(u)
      await sync(id)
      for (const folder of ["Junk", "Trash", "Drafts", "Sent", "Spam", "Sent Items", "Deleted Items"]) {
        await drop(u.client, folder, inbound(`In ${folder}`))
      }
      await drop(u.client, "INBOX", inbound("The control"))
      expect(await sync(id)).toMatchObject({ stored: 8, events: 1 })
      await expectOnly(id, ["The control"])
    })

    it("announces nothing flagged as a draft, deleted or junk in the inbox", async () => {
      const u = await imapUser("flags")
      const id = await register(u)
      await sync(id)
      await drop(u.client, "INBOX", inbound("A draft"), { flags: ["\\Draft"] })
      await drop(u.client, "INBOX", inbound("Deleted in place"), { flags: ["\\Deleted"] })
      await drop(u.client, "INBOX", inbound("Marked as junk"), { flags: ["$Junk"] })
      await drop(u.client, "INBOX", inbound("Read already"), { flags: ["\\Seen", "\\Flagged"] })
      await sync(id)
      await expectOnly(id, ["Read already"])
    })

    it("announces nothing the mailbox or one of its aliases sent", async () => {
      const u = await imapUser("own")
      const id = await register(u)
      await sync(id)
      await drop(u.client, "INBOX", inbound("Sent by the mailbox", { from: `Office <${u.address.toUpperCase()}>` }))
      await drop(u.client, "INBOX", inbound("Sent by an alias", { from: u.alias }))
      await drop(u.client, "INBOX", inbound("From a client"))
      await sync(id)
      await expectOnly(id, ["From a client"])
    })

    it("announces nothing received more than 24 hours before the sync", async () => {
      const u = await imapUser("recency")
      const id = await register(u)
      await sync(id)
      await drop(u.client, "INBOX", inbound("Received 25 hours ago"), { at: new Date(Date.now() - 25 * HOUR) })
      await drop(u.client, "INBOX", inbound("Received 23 hours ago"), { at: new Date(Date.now() - 23 * HOUR) })
      await sync(id)
      await expectOnly(id, ["Received 23 hours ago"])
    })

    it("never announces a stored message twice: moved, delivered again, or read again by a restarted process", async () => {
      const u = await imapUser("twice")
      await u.client.mailboxCreate("Done")
      const id = await register(u)
      await sync(id)
      const original = inbound("Only once")
      const noId = inbound("No Message-ID", { messageId: undefined })
      const at = new Date(Date.now() - HOUR)
      await drop(u.client, "INBOX", original, { at })
      await drop(u.client, "INBOX", noId, { at })
      await sync(id)
      await expectOnly(id, ["Only once", "No Message-ID"])
      // Moved to another folder (a new UID there), and the same message delivered to the inbox again.
      const lock = await u.client.getMailboxLock("INBOX")
      await u.client.messageMove("1:*", "Done", { uid: true }).finally(() => lock.release())
      await drop(u.client, "INBOX", original, { at })
      expect(await sync(id)).toMatchObject({ stored: 0, events: 0 })
      // A process started afresh reads only what it has not stored.
      await drop(u.client, "Done", noId, { at })
      const restarted = await server.run(
        Effect.flatMap(MailSync.MailSync, (s) => s.run({ mailboxId: id, ignoreSchedule: true })).pipe(Effect.provide(MailSyncLive))
      )
      expect(restarted.mailboxes[0]).toMatchObject({ result: "synced", stored: 0, events: 0 })
      await drop(u.client, "INBOX", inbound("The control"))
      await sync(id)
      await expectOnly(id, ["Only once", "No Message-ID", "The control"])
    })

    it("never announces messages of a personal mailbox, and does once the organization owns it", async () => {
      const u = await imapUser("personal")
      const id = await register(u, { owner: { type: "member", user_id: f.userId } })
      await sync(id)
      await drop(u.client, "INBOX", inbound("To a member's own mailbox"))
      expect(await sync(id)).toMatchObject({ stored: 1, events: 0 })
      const moved = await call(server, "PATCH", `/v1/mailboxes/${id}`, { token: f.tokens.sandbox, body: { owner: { type: "organization" } } })
      expect(moved.json.data.owner).toEqual({ type: "organization" })
      await drop(u.client, "INBOX", inbound("To the organization"))
      await sync(id)
      await expectOnly(id, ["To the organization"])
      const notMember = await call(server, "PATCH", `/v1/mailboxes/${id}`, {
        token: f.tokens.sandbox,
        body: { owner: { type: "member", user_id: "00000000-0000-4000-8000-0000000000aa" } }
      })
      expect(notMember.status).toBe(400)
      expect(notMember.json.error.details).toEqual([{ field: "owner.user_id", issue: "is not a member of this organization" }])
    })

    it("records the history of a folder whose UIDVALIDITY changed silently", async () => {
      const u = await imapUser("validity")
      await u.client.mailboxCreate("Orders")
      const id = await register(u)
      await sync(id)
      await u.client.mailboxDelete("Orders")
      await u.client.mailboxCreate("Orders")
      await drop(u.client, "Orders", inbound("Present when the folder was recreated"))
      expect(await sync(id)).toMatchObject({ stored: 1, events: 0 })
      await drop(u.client, "Orders", inbound("After the new UIDVALIDITY"))
      await sync(id)
      await expectOnly(id, ["After the new UIDVALIDITY"])
    })

    it("backs off a failing server, records why in last_error, and syncs again once fixed", async () => {
      const u = await imapUser("failing")
      const id = await register(u, {
        imap: { host: dovecot.host, port: dovecot.port, tls: "none", username: u.user, password: "not-the-password" }
      })
      const state = () =>
        server.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ failures: number; wait: number }>`SELECT failures,
            EXTRACT(EPOCH FROM (next_sync_at - now()))::float AS wait FROM mailboxes WHERE id = ${id}`)).then((r) => r[0]!)
      expect(await sync(id)).toMatchObject({ result: "failed", stored: 0 })
      const first = await state()
      await sync(id)
      await sync(id)
      const third = await state()
      expect([first.failures, third.failures]).toEqual([1, 3])
      // Retried after its backoff (one 3600 s interval here, which is also the cap), not before.
      expect(first.wait).toBeGreaterThan(3590)
      expect(third.wait).toBeGreaterThan(3590)
      const scheduled = await server.run(
        Effect.flatMap(MailSync.MailSync, (s) => s.run()).pipe(Effect.provide(MailSyncLive))
      )
      expect(scheduled.mailboxes.map((m) => m.mailbox_id)).not.toContain(id)
      const failed = await call(server, "GET", `/v1/mailboxes/${id}`, { token: f.tokens.sandbox })
      expect(failed.json.data.last_error).toMatch(/refused the sign-in/)
      expect(failed.json.data.last_synced_at).toBeNull()
      const fixed = await call(server, "PATCH", `/v1/mailboxes/${id}`, { token: f.tokens.sandbox, body: { imap: { password: `pw-${u.user}` } } })
      expect(fixed.json.data.last_error).toBeNull()
      expect((await state()).failures).toBe(0)
      expect(await sync(id)).toMatchObject({ result: "synced", first_sync: true })
    })

    it("keeps the password sealed at rest and never returns it", async () => {
      const u = await imapUser("sealed")
      const password = `pw-${u.user}`
      const created = await call(server, "POST", "/v1/mailboxes", {
        token: f.tokens.sandbox,
        body: { address: u.address, imap: { host: dovecot.host, port: dovecot.port, tls: "none", username: u.user, password } }
      })
      expect(created.status).toBe(201)
      expect(created.json.data.imap).toEqual({ host: dovecot.host, port: dovecot.port, tls: "none", username: u.user, auth: "password" })
      const id = created.json.data.id
      const listed = await call(server, "GET", "/v1/mailboxes?perPage=100", { token: f.tokens.sandbox })
      const got = await call(server, "GET", `/v1/mailboxes/${id}`, { token: f.tokens.sandbox })
      for (const text of [created.text, listed.text, got.text]) expect(text).not.toContain(password)
      const [row] = await server.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ credential_sealed: string }>`SELECT credential_sealed FROM mailboxes WHERE id = ${id}`))
      expect(row!.credential_sealed).toMatch(/^v1\./)
      expect(row!.credential_sealed).not.toContain(password)
      expect(await sync(id)).toMatchObject({ result: "synced" })
      const both = await call(server, "PATCH", `/v1/mailboxes/${id}`, {
        token: f.tokens.sandbox,
        body: { imap: { password: "a", access_token: "b" } }
      })
      expect(both.status).toBe(400)
      expect(both.json.error.details).toEqual([{ field: "imap.access_token", issue: "give a password or an access token, not both" }])
    })
  })
}

describe.each(testDatabases().map((d) => [d.name, d] as const))("the newcomer's flow on the sync interval (%s)", (_, db) => {
  const INTERVAL_SEC = 1
  let server: TestServer
  let receiver: Receiver

  beforeAll(async () => {
    server = await startTestServer(db.choice(), { background: true, env: { OPSPLATFORM_MAIL_INTERVAL_SEC: String(INTERVAL_SEC) } })
    receiver = await startReceiver()
  }, 60_000)
  afterAll(async () => {
    await server?.close()
    await receiver?.close()
  })

  it("delivers a message dropped into INBOX as a signed email.received within one interval, and never Junk, Drafts, Sent, an old message or the history", async () => {
    const f = await seedFixture(server)
    const u = await newImapUser("newcomer")
    try {
      await drop(u.client, "INBOX", inbound("History before registering"))
      const sub = await subscribe(server, f.tokens.sandbox, receiver.url, ["email.received"])
      receiver.secrets = [sub.secret]
      const res = await call(server, "POST", "/v1/mailboxes", {
        token: f.tokens.sandbox,
        body: {
          address: u.address,
          imap: { host: dovecot.host, port: dovecot.port, tls: "starttls", username: u.user, password: `pw-${u.user}` }
        }
      })
      expect(res.status, res.text).toBe(201)
      const id = res.json.data.id
      await eventually(
        () => call(server, "GET", `/v1/mailboxes/${id}`, { token: f.tokens.sandbox }),
        (r) => r.json.data.last_synced_at !== null,
        3 * INTERVAL_SEC * 1000 + 5_000
      )
      await drop(u.client, "Junk", inbound("Dropped into Junk"))
      await drop(u.client, "Drafts", inbound("Dropped into Drafts"))
      await drop(u.client, "Sent", inbound("Dropped into Sent"))
      await drop(u.client, "INBOX", inbound("An old message"), { at: new Date(Date.now() - 30 * HOUR) })
      const dropped = Date.now()
      await drop(u.client, "INBOX", inbound("Dropped into INBOX"))
      await receiver.until((all) => all.length >= 1, INTERVAL_SEC * 1000 + 8_000)
      // The sync that stored it began within one interval of the drop (plus the pass before it);
      // the rest is that sync and the delivery.
      const [stored] = await server.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ created_at: Date }>`SELECT created_at FROM mail_messages WHERE mailbox_id = ${id} AND subject = 'Dropped into INBOX'`))
      expect(stored!.created_at.getTime() - dropped).toBeLessThan(INTERVAL_SEC * 1000 + 1_000)
      expect(receiver.received[0]!.at - dropped).toBeLessThan(INTERVAL_SEC * 1000 + 5_000)
      // Two more intervals: nothing else arrives.
      await new Promise((r) => setTimeout(r, 2 * INTERVAL_SEC * 1000 + 500))
      expect(receiver.received.map((r) => JSON.parse(r.body).data.subject)).toEqual(["Dropped into INBOX"])
      expect(verifyWith(sub.secret, receiver.received[0]!.headers, receiver.received[0]!.body)).toBe(true)
      expect(receiver.rejected).toEqual([])
    } finally {
      await u.client.logout().catch(() => undefined)
      await server.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`UPDATE mailboxes SET enabled = FALSE WHERE organization_id = ${f.organizationId}`))
    }
  }, 60_000)
})
