import { assert, describe, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Option } from "effect"
import { Events, Mailboxes, MailboxRepo, MailSource, MailSync } from "@opsplatform/core"
import type { StoredOutboxEvent } from "@opsplatform/core/events/Outbox"
import { makeFixture, MemoryCore, MemoryStore } from "@opsplatform/testing"

/**
 * A mail server in memory for the sync's own guarantees (the rules are tested
 * against a real Dovecot in @opsplatform/http-node): what each folder holds,
 * and a hook that runs while a sync reads, to play another process.
 */
const folders = new Map<string, Array<MailSource.RemoteMessage>>()
const hooks: { duringRead: Effect.Effect<void> } = { duringRead: Effect.void }
let failWith: "none" | "source" | "defect" = "none"

const FakeSource = Layer.succeed(
  MailSource.MailSource,
  MailSource.MailSource.of({
    session: (_, use) =>
      failWith === "source"
        ? Effect.fail(new MailSource.MailSourceError({ reason: "Could not connect to imap.firm.example:993 (connection refused)" }))
        : failWith === "defect"
        ? Effect.die(new Error("a bug in an adapter"))
        : use({
          folders: Effect.sync(() => [...folders.keys()].map((path) => ({ path, specialUse: null }))),
          status: (path) => Effect.sync(() => ({ uidValidity: "7", uidNext: (folders.get(path)?.length ?? 0) + 1 })),
          messages: (path, query) =>
            Effect.andThen(hooks.duringRead, Effect.sync(() => ({
              uidValidity: "7",
              messages: (folders.get(path) ?? []).filter((m) => query._tag !== "AfterUid" || m.uid > query.uid)
            })))
        })
  })
)

const add = (path: string, subject: string, messageId: string | null) => {
  const list = folders.get(path) ?? []
  list.push({
    uid: list.length + 1,
    internalDate: new Date().toISOString(),
    sizeBytes: 900,
    flags: [],
    messageId,
    from: "client@client.example",
    subject,
    dateHeader: null,
    deliveredTo: [],
    addressedTo: [],
    hasAttachments: false
  })
  folders.set(path, list)
}

const Core = MailSync.MailSync.layer.pipe(Layer.provide(FakeSource), Layer.provideMerge(MemoryCore()))

describe("MailSync on memory storage", () => {
  layer(Core)((it) => {
    const setUp = Effect.gen(function*() {
      folders.clear()
      folders.set("INBOX", [])
      folders.set("Clients", [])
      hooks.duringRead = Effect.void
      failWith = "none"
      const f = yield* makeFixture()
      const mailbox = yield* (yield* Mailboxes.Mailboxes).create(f.live, {
        address: "office@firm.example",
        imap: { host: "imap.firm.example", username: "office", password: "secret" }
      })
      const sync = () => Effect.flatMap(MailSync.MailSync, (s) => s.run({ mailboxId: mailbox.id, ignoreSchedule: true }))
      const events = Effect.map(MemoryStore, (store) =>
        [...store.table<StoredOutboxEvent>("outbox_events").values()].filter((e) => e.organizationId === f.organizationId))
      yield* sync()
      return { f, mailbox, sync, events }
    })

    it.effect("keeps nothing of a sync whose lease another process took over or whose mailbox was deleted; the next sync announces it once", () =>
      Effect.gen(function*() {
        const { events, f, mailbox, sync } = yield* setUp
        add("INBOX", "Raced", "raced@client.example")
        const repo = yield* MailboxRepo.MailboxRepo
        // While this sync reads, the lease is dropped (what a takeover after the lease ran out does).
        hooks.duringRead = repo.resetSync(f.live, mailbox.id, false)
        const lost = yield* sync()
        assert.deepStrictEqual(lost.mailboxes.map((m) => [m.result, m.stored, m.events]), [["lease_lost", 0, 0]])
        assert.deepStrictEqual(yield* events, [])
        hooks.duringRead = Effect.void
        // A mailbox deleted while a sync read it: nothing is stored for it either.
        const doomed = yield* (yield* Mailboxes.Mailboxes).create(f.live, {
          address: "doomed@firm.example",
          imap: { host: "imap.firm.example", username: "doomed", password: "secret" }
        })
        const syncDoomed = Effect.flatMap(MailSync.MailSync, (s) => s.run({ mailboxId: doomed.id, ignoreSchedule: true }))
        yield* syncDoomed
        hooks.duringRead = Effect.ignore((yield* Mailboxes.Mailboxes).remove(f.live, doomed.id))
        assert.deepStrictEqual((yield* syncDoomed).mailboxes.map((m) => [m.result, m.stored]), [["lease_lost", 0]])
        assert.deepStrictEqual(yield* events, [])
        hooks.duringRead = Effect.void
        const kept = yield* sync()
        assert.deepStrictEqual(kept.mailboxes.map((m) => [m.result, m.stored, m.events]), [["synced", 1, 1]])
        const [announced] = yield* events
        assert.strictEqual(announced?.eventId, Events.emailReceivedEventId(String(announced?.data.id)))
        assert.isTrue(Option.isSome(yield* repo.findMessage(f.live, String(announced?.data.id))))
      }))

    it.effect("gives the lease back when stopped mid-sync, so the next pass syncs the mailbox at once", () =>
      Effect.gen(function*() {
        const { events, sync } = yield* setUp
        add("INBOX", "Interrupted", "interrupted@client.example")
        const reading = yield* Deferred.make<void>()
        hooks.duringRead = Effect.andThen(Deferred.succeed(reading, undefined), Effect.never)
        const stopped = yield* Effect.forkChild(sync())
        yield* Deferred.await(reading)
        yield* Fiber.interrupt(stopped)
        assert.deepStrictEqual(yield* events, [])
        hooks.duringRead = Effect.void
        const next = yield* sync()
        assert.deepStrictEqual(next.mailboxes.map((m) => [m.result, m.events]), [["synced", 1]])
      }))

    it.effect("stores a message seen in two folders in one sync once, announcing it from the inbox", () =>
      Effect.gen(function*() {
        const { events, sync } = yield* setUp
        add("Clients", "Copied by a rule", "copied@client.example")
        add("INBOX", "Copied by a rule", "copied@client.example")
        const report = yield* sync()
        assert.deepStrictEqual(report.mailboxes.map((m) => [m.stored, m.events]), [[1, 1]])
        assert.strictEqual((yield* events).length, 1)
      }))

    it.effect("records a server's failure and a defect alike in last_error, without the cause's secrets", () =>
      Effect.gen(function*() {
        const { f, mailbox, sync } = yield* setUp
        const mailboxes = yield* Mailboxes.Mailboxes
        failWith = "source"
        assert.deepStrictEqual((yield* sync()).mailboxes.map((m) => m.result), ["failed"])
        assert.strictEqual((yield* mailboxes.get(f.live, mailbox.id)).last_error, "Could not connect to imap.firm.example:993 (connection refused)")
        failWith = "defect"
        assert.deepStrictEqual((yield* sync()).mailboxes.map((m) => m.result), ["failed"])
        assert.strictEqual(
          (yield* mailboxes.get(f.live, mailbox.id)).last_error,
          "The sync failed unexpectedly; the operator's log has the cause"
        )
      }))
  })
})
