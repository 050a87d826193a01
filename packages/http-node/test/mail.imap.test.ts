import { Effect } from "effect"
import * as fs from "node:fs"
import { beforeAll, describe, expect, inject, it } from "vitest"
import { MailRules, MailSource } from "@opsplatform/core"
import { ImapMailSource, toRemoteMessage } from "../src/server/imapMailSource.ts"
import { dovecotFor, rawMessage } from "./support/dovecot.ts"
import { receiverCertificateFile } from "./support/receiver.ts"

/** The IMAP adapter against a real Dovecot: what it reads, and how it connects and fails. */
describe("the IMAP mail source on Dovecot", () => {
  const dovecot = dovecotFor(inject("dovecot"))
  /** The user this file reads as: unique in the run, since every test file shares the Dovecot. */
  const reader = `reader${process.pid}x${Date.now().toString(36)}`
  const source = ImapMailSource({ allowPrivate: true, extraCa: fs.readFileSync(receiverCertificateFile, "utf8") })
  const connection = (user: string, overrides: Partial<MailSource.MailConnection> = {}): MailSource.MailConnection => ({
    host: "127.0.0.1",
    port: dovecot.port,
    tls: "none",
    username: user,
    credential: { kind: "password", secret: "pw-" + user },
    ...overrides
  })
  const run = <A, E>(effect: Effect.Effect<A, E, MailSource.MailSource>) =>
    Effect.runPromise(Effect.provide(effect, source))
  const withSession = <A>(conn: MailSource.MailConnection, use: (s: MailSource.MailSession) => Effect.Effect<A, MailSource.MailSourceError>) =>
    run(Effect.flatMap(MailSource.MailSource, (m) => m.session(conn, use)))
  const failureOf = (conn: MailSource.MailConnection, layer = source) =>
    Effect.runPromise(Effect.provide(
      Effect.flip(Effect.flatMap(MailSource.MailSource, (m) => m.session(conn, (s) => s.folders))),
      layer
    ))

  beforeAll(async () => {
    dovecot.addUser(reader, `pw-${reader}`)
    const client = await dovecot.connect(reader)
    try {
      await client.mailboxCreate("Spam")
      await client.mailboxCreate("Clients/Acme")
      await client.append("INBOX", rawMessage({
        from: "Ana Pop <ana@client.example>",
        to: "office@firm.example",
        cc: "boss@firm.example",
        subject: "Order 42",
        messageId: "order-42@client.example",
        deliveredTo: "sales@firm.example",
        attachment: "order-42.pdf"
      }), ["\\Seen"], new Date("2026-03-02T07:00:00Z"))
      await client.append("INBOX", rawMessage({ from: "bob@client.example", to: "office@firm.example", subject: "No id" }), [
        "$Junk"
      ], new Date("2026-03-03T07:00:00Z"))
    } finally {
      await client.logout()
    }
  }, 60_000)

  it("lists the selectable folders (not the parent that only holds Clients/Acme) with their special-use, reading Spam by its name", async () => {
    const folders = await withSession(connection(reader), (s) => s.folders)
    const kinds = Object.fromEntries(folders.map((f) => [f.path, MailRules.folderKind(f)]))
    expect(kinds).toEqual({
      INBOX: "inbox",
      Junk: "junk",
      Drafts: "drafts",
      Sent: "sent",
      Trash: "trash",
      Spam: "junk",
      "Clients/Acme": "custom"
    })
    expect(folders.find((f) => f.path === "Junk")?.specialUse).toBe("\\Junk")
  })

  it("reads headers, flags, INTERNALDATE, size and BODYSTRUCTURE, above a UID or since an instant", async () => {
    const { after, since, status } = await withSession(connection(reader), (s) =>
      Effect.gen(function*() {
        const status = yield* s.status("INBOX")
        const after = yield* s.messages("INBOX", { _tag: "AfterUid", uid: 0, limit: 10 })
        const since = yield* s.messages("INBOX", { _tag: "Since", epochMs: Date.parse("2026-03-03T00:00:00Z"), limit: 10 })
        return { after, since, status }
      }))
    expect(status.uidNext).toBe(3)
    expect(after.uidValidity).toBe(status.uidValidity)
    const [order, noId] = after.messages
    expect(order).toMatchObject({
      uid: 1,
      internalDate: "2026-03-02T07:00:00.000Z",
      messageId: "order-42@client.example",
      from: "ana@client.example",
      subject: "Order 42",
      deliveredTo: ["sales@firm.example"],
      addressedTo: ["office@firm.example", "boss@firm.example"],
      hasAttachments: true,
      flags: expect.arrayContaining(["\\Seen"])
    })
    expect(order!.sizeBytes).toBeGreaterThan(300)
    expect(noId).toMatchObject({ uid: 2, messageId: null, hasAttachments: false, flags: expect.arrayContaining(["$Junk"]) })
    // SEARCH SINCE is read a day early; the exact instant is the sync's to judge.
    expect(since.messages.map((m) => m.uid)).toEqual([1, 2])
    const later = await withSession(connection(reader), (s) => s.messages("INBOX", { _tag: "AfterUid", uid: 2, limit: 10 }))
    expect(later.messages).toEqual([])
    const limited = await withSession(connection(reader), (s) => s.messages("INBOX", { _tag: "AfterUid", uid: 0, limit: 1 }))
    expect(limited.messages.map((m) => m.uid)).toEqual([1])
  })

  it("connects with implicit TLS and with STARTTLS, trusting the configured CA", async () => {
    const implicit = await withSession(connection(reader, { port: dovecot.tlsPort, tls: "implicit" }), (s) => s.status("INBOX"))
    const starttls = await withSession(connection(reader, { tls: "starttls" }), (s) => s.status("INBOX"))
    expect(implicit.uidNext).toBe(3)
    expect(starttls.uidNext).toBe(3)
    const untrusted = await failureOf(connection(reader, { port: dovecot.tlsPort, tls: "implicit" }), ImapMailSource({ allowPrivate: true }))
    // An untrusted certificate reads as any other failed connection: the text tells no port's state.
    expect(untrusted.reason).toBe(`Could not connect to 127.0.0.1:${dovecot.tlsPort} as an IMAP server`)
  })

  it("reports a refused sign-in, a closed port and a private host as errors that name no secret", async () => {
    const refused = await failureOf(connection(reader, { credential: { kind: "password", secret: "wrong-secret" } }))
    expect(refused._tag).toBe("MailSourceError")
    expect(refused.reason).toMatch(/refused the sign-in/)
    expect(refused.reason).not.toContain("wrong-secret")
    const closed = await failureOf(connection(reader, { port: 1 }))
    expect(closed.reason).toBe("Could not connect to 127.0.0.1:1 as an IMAP server")
    const blocked = await failureOf(connection(reader, { host: "localhost" }), ImapMailSource({ allowPrivate: false }))
    expect(blocked.reason).toMatch(/^localhost resolves to .*loopback, private/)
  })

  it("gives null for a size the server does not report", () => {
    const message = toRemoteMessage({ seq: 1, uid: 9, internalDate: new Date("2026-03-02T07:00:00Z"), envelope: { subject: "S" } })
    expect(message).toMatchObject({ uid: 9, sizeBytes: null, hasAttachments: false, from: null, messageId: null, subject: "S" })
  })
})
