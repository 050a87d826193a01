import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import type { CoreLayers } from "@opsplatform/core"
import { MailboxRepo } from "@opsplatform/core/mail/MailboxRepo"
import { MailboxId, MailMessageId, type StoredMailbox, type StoredMessage } from "@opsplatform/core/mail/model"
import { Ids } from "@opsplatform/core/shared/Ids"
import { pageRequest } from "@opsplatform/core/shared/pagination"
import { freshOrganization, timestamps } from "./support.ts"

const mailbox = (id: string, at: string, overrides: Partial<StoredMailbox> = {}): StoredMailbox => ({
  id: MailboxId.make(id),
  address: `office-${id.slice(-6)}@example.com`,
  aliases: ["sales@example.com"],
  owner_user_id: null,
  imap_host: "imap.example.com",
  imap_port: 993,
  imap_tls: "implicit",
  imap_username: "office",
  credential_kind: "password",
  credential_sealed: "v1.sealed",
  // Off unless a test claims it: a sync process sharing the database must not try these.
  enabled: false,
  last_synced_at: null,
  last_error: null,
  baselined_at: null,
  failures: 0,
  next_sync_at: null,
  created_at: at,
  updated_at: at,
  ...overrides
})

const message = (id: string, mailboxId: string, identity: string, at: string): StoredMessage => ({
  id: MailMessageId.make(id),
  mailbox_id: MailboxId.make(mailboxId),
  identity,
  folder: "INBOX",
  uid: 7,
  message_id: "m1@example.com",
  from_address: "client@example.org",
  subject: "Order",
  recipient: "sales@example.com",
  received_at: at,
  size_bytes: 2048,
  has_attachments: false,
  outcome: "emitted",
  created_at: at
})

/** The MailboxRepo contract: every implementation must pass it unchanged. */
export const mailboxRepoConformance = (
  name: string,
  storage: Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>
) =>
  describe(`MailboxRepo conformance: ${name}`, () => {
    layer(storage, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("stores, finds, updates and removes within one tenant, never across tenants", () =>
        Effect.gen(function*() {
          const repo = yield* MailboxRepo
          const ids = yield* Ids
          const a = yield* freshOrganization
          const b = yield* freshOrganization
          const [t0, t1] = timestamps(2)
          const m = mailbox(yield* ids.uuid, t0!)
          yield* repo.insert(a.live, m)
          assert.deepStrictEqual(yield* repo.find(a.live, m.id), Option.some(m))
          assert.isTrue(Option.isNone(yield* repo.find(a.sandbox, m.id)))
          assert.isTrue(Option.isNone(yield* repo.find(b.live, m.id)))
          const page = yield* pageRequest({})
          assert.strictEqual((yield* repo.list(b.live, {}, page)).meta.total, 0)
          assert.strictEqual((yield* repo.list(a.live, { enabled: true }, page)).meta.total, 0)
          assert.strictEqual((yield* repo.list(a.live, { enabled: false }, page)).meta.total, 1)
          // A change on request never writes the sync's bookkeeping.
          yield* repo.update(a.live, { ...m, aliases: [], last_error: "forged", failures: 9, updated_at: t1! })
          const updated = Option.getOrThrow(yield* repo.find(a.live, m.id))
          assert.deepStrictEqual([updated.aliases, updated.last_error, updated.failures], [[], null, 0])
          yield* repo.update(b.live, { ...m, address: "hijack@example.com" })
          assert.strictEqual(Option.getOrThrow(yield* repo.find(a.live, m.id)).address, m.address)
          assert.isFalse(yield* repo.remove(b.live, m.id))
          assert.isTrue(yield* repo.remove(a.live, m.id))
          assert.isTrue(Option.isNone(yield* repo.find(a.live, m.id)))
        }))

      it.effect("refuses a second mailbox with the same address in any case, allows it in the other environment", () =>
        Effect.gen(function*() {
          const repo = yield* MailboxRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const [t0, t1, t2] = timestamps(3)
          const first = mailbox(yield* ids.uuid, t0!, { address: "Office@Example.com" })
          yield* repo.insert(org.live, first)
          const refused = yield* Effect.flip(repo.insert(org.live, mailbox(yield* ids.uuid, t1!, { address: "office@example.COM" })))
          assert.strictEqual(refused._tag, "Conflict")
          yield* repo.insert(org.sandbox, mailbox(yield* ids.uuid, t2!, { address: "office@example.com" }))
        }))

      it.effect("stores a message once per identity in a mailbox, answering which were new", () =>
        Effect.gen(function*() {
          const repo = yield* MailboxRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const [t0] = timestamps(1)
          const one = mailbox(yield* ids.uuid, t0!)
          const two = mailbox(yield* ids.uuid, t0!)
          yield* repo.insert(org.live, one)
          yield* repo.insert(org.live, two)
          const m1 = message(yield* ids.uuid, one.id, "mid:m1@example.com", t0!)
          assert.deepStrictEqual(yield* repo.insertMessages(org.live, [m1]), [m1.id])
          const again = message(yield* ids.uuid, one.id, "mid:m1@example.com", t0!)
          const other = message(yield* ids.uuid, one.id, "mid:m2@example.com", t0!)
          assert.deepStrictEqual(yield* repo.insertMessages(org.live, [again, other]), [other.id])
          const elsewhere = message(yield* ids.uuid, two.id, "mid:m1@example.com", t0!)
          assert.deepStrictEqual(yield* repo.insertMessages(org.live, [elsewhere]), [elsewhere.id])
          assert.deepStrictEqual(yield* repo.findMessage(org.live, m1.id), Option.some(m1))
          assert.isTrue(Option.isNone(yield* repo.findMessage(org.sandbox, m1.id)))
          assert.isTrue(Option.isNone(yield* repo.findMessage(org.live, again.id)))
        }))

      it.effect("leases a due mailbox to one claimer until its lease runs out, and lets only the holder finish", () =>
        Effect.gen(function*() {
          const repo = yield* MailboxRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const [t0, t1, t2, t3, t4] = timestamps(5, Date.UTC(2026, 2, 1))
          const m = mailbox(yield* ids.uuid, t0!, { enabled: true })
          yield* repo.insert(org.live, m)
          const claim = (now: string, leaseUntil: string, options: { ignoreSchedule?: boolean; exclude?: Array<string> } = {}) =>
            Effect.flatMap(ids.uuid, (claimToken) =>
              repo.claim({ now, leaseUntil, claimToken, limit: 10, mailboxId: m.id, ...options }))
          const [first] = yield* claim(t1!, t3!)
          assert.strictEqual(first?.mailbox.id, m.id)
          assert.deepStrictEqual(first?.tenant, org.live)
          assert.deepStrictEqual(yield* claim(t2!, t3!), [])
          // The lease ran out: another claimer takes the mailbox over, and the first can no longer finish.
          const [second] = yield* claim(t3!, t4!)
          assert.isDefined(second)
          assert.isFalse(yield* repo.finish(first!, { _tag: "Synced", at: t3!, nextSyncAt: t4! }))
          assert.isTrue(yield* repo.finish(second!, { _tag: "Synced", at: t3!, nextSyncAt: t4! }))
          const synced = Option.getOrThrow(yield* repo.find(org.live, m.id))
          assert.deepStrictEqual([synced.last_synced_at, synced.baselined_at, synced.next_sync_at], [t3, t3, t4])
          // Not due before next_sync_at, unless the schedule is ignored; never when excluded.
          assert.deepStrictEqual(yield* claim(t3!, t4!), [])
          assert.deepStrictEqual(yield* claim(t3!, t4!, { ignoreSchedule: true, exclude: [m.id] }), [])
          // A process stopping mid-sync gives the lease back: the mailbox is claimable at once, unchanged.
          const [stopped] = yield* claim(t3!, t4!, { ignoreSchedule: true })
          yield* repo.release(first!)
          assert.deepStrictEqual(yield* claim(t3!, t4!, { ignoreSchedule: true }), [])
          yield* repo.release(stopped!)
          assert.deepStrictEqual(Option.getOrThrow(yield* repo.find(org.live, m.id)), synced)
          const [forced] = yield* claim(t3!, t4!, { ignoreSchedule: true })
          assert.isTrue(yield* repo.finish(forced!, { _tag: "Failed", at: t3!, error: "refused", failures: 1, nextSyncAt: t4! }))
          const failed = Option.getOrThrow(yield* repo.find(org.live, m.id))
          assert.deepStrictEqual([failed.last_synced_at, failed.last_error, failed.failures], [t3, "refused", 1])
          yield* repo.update(org.live, { ...failed, enabled: false })
          assert.deepStrictEqual(yield* claim(t4!, t4!, { ignoreSchedule: true }), [])
        }))

      it.effect("keeps folder states per mailbox; a reset drops the lease and backoff, and with another account the folders", () =>
        Effect.gen(function*() {
          const repo = yield* MailboxRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const [t0, t1, t2] = timestamps(3, Date.UTC(2026, 3, 1))
          const m = mailbox(yield* ids.uuid, t0!, { enabled: true })
          yield* repo.insert(org.live, m)
          const folder = { mailbox_id: m.id, path: "INBOX", uid_validity: "4294967295", last_uid: 10, updated_at: t0! }
          yield* repo.saveFolders([folder, { ...folder, path: "Clients/Acme", last_uid: 3 }])
          yield* repo.saveFolders([{ ...folder, last_uid: 12, updated_at: t1! }])
          assert.deepStrictEqual((yield* repo.folders(m.id)).map((f) => [f.path, f.uid_validity, f.last_uid]), [
            ["Clients/Acme", "4294967295", 3],
            ["INBOX", "4294967295", 12]
          ])
          const [held] = yield* repo.claim({ now: t1!, leaseUntil: t2!, claimToken: yield* ids.uuid, limit: 1, mailboxId: m.id })
          assert.isTrue(yield* repo.finish(held!, { _tag: "Failed", at: t1!, error: "down", failures: 3, nextSyncAt: t2! }))
          yield* repo.resetSync(org.sandbox, m.id, true)
          assert.strictEqual((yield* repo.folders(m.id)).length, 2)
          yield* repo.resetSync(org.live, m.id, false)
          const reset = Option.getOrThrow(yield* repo.find(org.live, m.id))
          assert.deepStrictEqual([reset.failures, reset.last_error, reset.next_sync_at], [0, null, null])
          assert.strictEqual((yield* repo.folders(m.id)).length, 2)
          const [again] = yield* repo.claim({ now: t1!, leaseUntil: t2!, claimToken: yield* ids.uuid, limit: 1, mailboxId: m.id })
          yield* repo.resetSync(org.live, m.id, true)
          assert.isFalse(yield* repo.finish(again!, { _tag: "Synced", at: t1!, nextSyncAt: t2! }))
          assert.deepStrictEqual(yield* repo.folders(m.id), [])
          const forgotten = Option.getOrThrow(yield* repo.find(org.live, m.id))
          assert.isNull(forgotten.baselined_at)
          yield* repo.update(org.live, { ...forgotten, enabled: false })
        }))
    })
  })
