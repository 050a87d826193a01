import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { RemoteMessage } from "../../src/mail/MailSource.ts"
import {
  backoffMs,
  checkImapHost,
  folderKind,
  hasAttachments,
  MAX_BACKOFF_MS,
  messageIdentity,
  messageOutcome,
  normalizeMessageId,
  RECENCY_MS,
  recipientOf
} from "../../src/mail/rules.ts"

const now = Date.UTC(2026, 2, 2, 12)
const message = (overrides: Partial<RemoteMessage> = {}): RemoteMessage => ({
  uid: 1,
  internalDate: new Date(now - 1000).toISOString(),
  sizeBytes: 1200,
  flags: [],
  messageId: "a@b",
  from: "client@client.example",
  subject: "Hello",
  dateHeader: null,
  deliveredTo: [],
  addressedTo: ["office@firm.example"],
  hasAttachments: false,
  ...overrides
})
const mailbox = { address: "Office@firm.example", aliases: ["sales@firm.example"], personal: false }
const context = { mailbox, folder: "inbox" as const, syncedAtMs: now }

describe("folders", () => {
  it("are read by special-use first, then by name, INBOX always being the inbox", () => {
    const kind = (path: string, specialUse: string | null = null) => folderKind({ path, specialUse })
    expect(kind("inbox")).toBe("inbox")
    expect(kind("INBOX", "\\Junk")).toBe("inbox")
    expect(kind("Courrier indésirable", "\\Junk")).toBe("junk")
    expect(kind("Important", "\\Flagged")).toBe("flagged")
    expect(kind("[Gmail]/All Mail", "\\All")).toBe("all")
    expect(kind("Spam")).toBe("junk")
    expect(kind("INBOX/Deleted Items")).toBe("trash")
    expect(kind("Sent Messages")).toBe("sent")
    expect(kind("Drafts")).toBe("drafts")
    expect(kind("Clients/Sent to review")).toBe("custom")
    expect(kind("Archive", "\\Archive")).toBe("archive")
  })
})

describe("the outcome of a new message", () => {
  it("is emitted for a recent inbound message of an organization mailbox in the inbox, a custom folder or an archive", () => {
    for (const folder of ["inbox", "custom", "archive"] as const) expect(messageOutcome(message(), { ...context, folder })).toBe("emitted")
  })

  it("excludes spam, trash, drafts, sent and the folders that only show others again", () => {
    for (const folder of ["junk", "trash", "drafts", "sent", "all", "flagged"] as const) {
      expect(messageOutcome(message(), { ...context, folder })).toBe("excluded_folder")
    }
  })

  it("excludes drafts, messages deleted in place and those a client marked as junk, whatever the flag's case", () => {
    for (const flag of ["\\Draft", "\\deleted", "$Junk", "Junk"]) {
      expect(messageOutcome(message({ flags: ["\\Seen", flag] }), context)).toBe("excluded_flag")
    }
    expect(messageOutcome(message({ flags: ["\\Seen", "$NotJunk", "\\Answered"] }), context)).toBe("emitted")
  })

  it("excludes what the mailbox or an alias sent, in any case", () => {
    expect(messageOutcome(message({ from: "office@FIRM.example" }), context)).toBe("own_message")
    expect(messageOutcome(message({ from: " Sales@firm.example" }), context)).toBe("own_message")
  })

  it("counts only messages received within 24 hours of the sync, the boundary included", () => {
    const at = (ms: number) => message({ internalDate: new Date(ms).toISOString() })
    expect(messageOutcome(at(now - RECENCY_MS), context)).toBe("emitted")
    expect(messageOutcome(at(now - RECENCY_MS - 1), context)).toBe("too_old")
    expect(messageOutcome(message({ internalDate: "not a date" }), context)).toBe("too_old")
  })

  it("never emits for a personal mailbox, and reads the rules in order", () => {
    expect(messageOutcome(message(), { ...context, mailbox: { ...mailbox, personal: true } })).toBe("personal_mailbox")
    expect(messageOutcome(message({ from: "sales@firm.example", flags: ["\\Draft"] }), { ...context, folder: "sent" })).toBe(
      "excluded_folder"
    )
    expect(messageOutcome(message({ from: "sales@firm.example", flags: ["\\Draft"] }), context)).toBe("excluded_flag")
  })
})

describe("the recipient", () => {
  it("is the own address named by Delivered-To, then To or Cc, spelt as the mailbox spells it; else the mailbox's address", () => {
    expect(recipientOf(mailbox, { deliveredTo: ["other@x.example", "SALES@firm.example"], addressedTo: ["office@firm.example"] }))
      .toBe("sales@firm.example")
    expect(recipientOf(mailbox, { deliveredTo: [], addressedTo: ["team@x.example", "office@firm.EXAMPLE"] })).toBe(
      "Office@firm.example"
    )
    expect(recipientOf(mailbox, { deliveredTo: [], addressedTo: ["someone@else.example"] })).toBe("Office@firm.example")
  })
})

describe("message identity", () => {
  it("is the Message-ID without brackets, or a fingerprint of what a move keeps", () => {
    expect(normalizeMessageId(" <abc@host> ")).toBe("abc@host")
    expect(normalizeMessageId("<>")).toBeNull()
    expect(normalizeMessageId(undefined)).toBeNull()
    expect(messageIdentity(message({ messageId: "abc@host" }))).toEqual({ kind: "message_id", value: "mid:abc@host" })
    const a = messageIdentity(message({ messageId: null, uid: 1 }))
    const moved = messageIdentity(message({ messageId: null, uid: 99, flags: ["\\Seen"] }))
    const other = messageIdentity(message({ messageId: null, subject: "Other" }))
    expect(a.kind).toBe("fingerprint")
    expect(moved).toEqual(a)
    expect(other).not.toEqual(a)
  })
})

describe("attachments from BODYSTRUCTURE", () => {
  const text = { type: "text/plain" }
  it("are parts marked attachment, attached messages, and named non-text parts not shown inline", () => {
    expect(hasAttachments(text)).toBe(false)
    expect(hasAttachments({ type: "multipart/alternative", childNodes: [text, { type: "text/html" }] })).toBe(false)
    expect(hasAttachments({ type: "multipart/mixed", childNodes: [text, { type: "application/pdf", disposition: "attachment" }] }))
      .toBe(true)
    expect(hasAttachments({ type: "multipart/mixed", childNodes: [text, { type: "message/rfc822" }] })).toBe(true)
    expect(hasAttachments({ type: "multipart/mixed", childNodes: [text, { type: "image/png", filename: "scan.png" }] })).toBe(true)
    expect(hasAttachments({
      type: "multipart/related",
      childNodes: [{ type: "text/html" }, { type: "image/png", disposition: "inline", filename: "logo.png" }]
    })).toBe(false)
    expect(hasAttachments({ type: "multipart/mixed", childNodes: [text, { type: "text/csv", disposition: "ATTACHMENT" }] })).toBe(true)
  })
})

describe("the backoff of a failing server", () => {
  it("waits one interval after the first failure, then doubles, never past an hour (or the interval when longer)", () => {
    expect([1, 2, 3, 4].map((n) => backoffMs(n, 60_000))).toEqual([60_000, 120_000, 240_000, 480_000])
    expect(backoffMs(50, 60_000)).toBe(MAX_BACKOFF_MS)
    expect(backoffMs(3, 2 * MAX_BACKOFF_MS)).toBe(2 * MAX_BACKOFF_MS)
    fc.assert(fc.property(fc.integer({ min: 1, max: 1_000 }), fc.integer({ min: 1_000, max: 86_400_000 }), (n, interval) => {
      const wait = backoffMs(n, interval)
      return wait >= Math.min(interval, MAX_BACKOFF_MS) && wait <= Math.max(interval, MAX_BACKOFF_MS) &&
        backoffMs(n + 1, interval) >= wait
    }))
  })
})

describe("IMAP hosts", () => {
  it("refuse plain text in live and, unless allowed, loopback, private and local hosts", () => {
    expect(checkImapHost("imap.firm.example", "none", "sandbox", false)).toEqual([])
    expect(checkImapHost("imap.firm.example", "none", "live", false).map((d) => d.field)).toEqual(["imap.tls"])
    for (const host of ["127.0.0.1", "10.1.2.3", "[::1]", "localhost", "imap.internal"]) {
      expect(checkImapHost(host, "implicit", "live", false).map((d) => d.field), host).toEqual(["imap.host"])
      expect(checkImapHost(host, "implicit", "live", true), host).toEqual([])
    }
    expect(checkImapHost("93.184.216.34", "implicit", "live", false)).toEqual([])
  })
})
