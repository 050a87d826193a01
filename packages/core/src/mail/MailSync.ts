import { Clock, Context, Effect, Layer, Schema } from "effect"
import { Digest } from "effect/crypto"
import { emailReceivedEventId, event } from "../events/catalog.ts"
import { Outbox } from "../events/Outbox.ts"
import { Ids, newId } from "../shared/Ids.ts"
import { isUuid } from "../shared/schemas.ts"
import type { Environment } from "../shared/tenant.ts"
import { isoFromMillis } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { SecretBox } from "../webhooks/SecretBox.ts"
import { type ClaimedMailbox, MailboxRepo } from "./MailboxRepo.ts"
import { mailboxCredentialContext } from "./Mailboxes.ts"
import { type FolderState, MailMessageId, type StoredMessage } from "./model.ts"
import { type MailSession, MailSource, MailSourceError, type RemoteMessage } from "./MailSource.ts"
import { backoffMs, folderKind, messageIdentity, messageOutcome, RECENCY_MS, recipientOf } from "./rules.ts"
import { MailSettings } from "./settings.ts"

export interface MailboxSyncReport {
  readonly mailbox_id: string
  readonly organization_id: string
  readonly environment: Environment
  /** `lease_lost`: another process took the mailbox over meanwhile; nothing of this sync was kept. */
  readonly result: "synced" | "failed" | "lease_lost"
  /** Whether this sync recorded the mailbox's history (its first). */
  readonly first_sync: boolean
  /** Messages stored for the first time. */
  readonly stored: number
  readonly events: number
  readonly error: string | null
}

export interface MailSyncSummary {
  readonly ran_at: string
  readonly mailboxes: ReadonlyArray<MailboxSyncReport>
}

export interface MailSyncScope {
  /** Only this mailbox (any organization). */
  readonly mailboxId?: string | undefined
  /** Sync every enabled mailbox now, due or not (the operator's on-demand run). */
  readonly ignoreSchedule?: boolean | undefined
}

class LeaseLost extends Schema.TaggedError<LeaseLost>()("LeaseLost", {}) {}

/** A folder as one sync read it. */
interface FolderRead {
  readonly state: FolderState
  readonly silent: boolean
  readonly kind: ReturnType<typeof folderKind>
  readonly path: string
  readonly messages: ReadonlyArray<RemoteMessage>
}

const MAX_ERROR_LENGTH = 500

/**
 * The mail sync: leases due mailboxes (one process per mailbox at a time),
 * reads each folder's new messages over the MailSource, and stores them and
 * their `email.received` events in one transaction that also ends the lease
 * — so a process that lost its lease keeps nothing, and a message is stored
 * (and announced) once, whichever process or folder sees it.
 */
export class MailSync extends Context.Service<MailSync, {
  readonly run: (scope?: MailSyncScope) => Effect.Effect<MailSyncSummary>
}>()("@opsplatform/core/mail/MailSync") {
  static readonly layer: Layer.Layer<
    MailSync,
    never,
    MailboxRepo | MailSource | SecretBox | Outbox | Transactor | Ids | Digest.Digest
  > = Layer.effect(
    MailSync,
    Effect.gen(function*() {
      const repo = yield* MailboxRepo
      const source = yield* MailSource
      const box = yield* SecretBox
      const outbox = yield* Outbox
      const tx = yield* Transactor
      const ids = yield* Ids
      const digest = yield* Digest.Digest
      const settings = yield* MailSettings

      const identityOf = (message: RemoteMessage) => {
        const identity = messageIdentity(message)
        return identity.kind === "message_id"
          ? Effect.succeed(identity.value)
          : Effect.map(
            Effect.orDie(digest.digestHex(Digest.sha256, new TextEncoder().encode(identity.value))),
            (hex) => `sum:${hex}`
          )
      }

      /** Reads what is new in every folder; no database write happens here. */
      const readFolders = (claim: ClaimedMailbox, session: MailSession, startMs: number, known: ReadonlyMap<string, FolderState>) =>
        Effect.gen(function*() {
          const firstSync = claim.mailbox.baselined_at === null
          const folders = [...yield* session.folders].sort((a, b) =>
            a.path.toUpperCase() === "INBOX" ? -1 : b.path.toUpperCase() === "INBOX" ? 1 : a.path.localeCompare(b.path)
          )
          const reads: Array<FolderRead> = []
          for (const folder of folders) {
            const status = yield* session.status(folder.path)
            const state = known.get(folder.path)
            const validityChanged = state !== undefined && state.uid_validity !== status.uidValidity
            const silent = firstSync || validityChanged
            // A folder read for the first time gives what arrived within the recency window (older would not qualify).
            const query = silent || state === undefined
              ? { _tag: "Since" as const, epochMs: startMs - RECENCY_MS, limit: settings.fetchLimit }
              : { _tag: "AfterUid" as const, uid: state.last_uid, limit: settings.fetchLimit }
            const read = yield* session.messages(folder.path, query)
            // UIDVALIDITY moved between the two commands: the folder is read again next time.
            if (read.uidValidity !== status.uidValidity) continue
            const messages = query._tag === "AfterUid" ? read.messages.filter((m) => m.uid > query.uid) : read.messages
            const highest = messages.reduce((max, m) => Math.max(max, m.uid), query._tag === "AfterUid" ? query.uid : 0)
            // Below UIDNEXT every message has been seen, unless the limit left some for the next sync.
            const lastUid = query._tag === "AfterUid" && messages.length >= query.limit
              ? highest
              : Math.max(highest, status.uidNext - 1, query._tag === "AfterUid" ? query.uid : 0)
            reads.push({
              path: folder.path,
              kind: folderKind(folder),
              silent,
              messages,
              state: {
                mailbox_id: claim.mailbox.id,
                path: folder.path,
                uid_validity: status.uidValidity,
                last_uid: lastUid,
                updated_at: isoFromMillis(startMs)
              }
            })
          }
          return { reads, firstSync }
        })

      /** The messages to store, the first sight of each identity winning (the inbox is read first). */
      const toStore = (claim: ClaimedMailbox, reads: ReadonlyArray<FolderRead>, startMs: number) =>
        Effect.gen(function*() {
          const seen = new Set<string>()
          const rows: Array<StoredMessage> = []
          const mailbox = claim.mailbox
          for (const read of reads) {
            for (const m of read.messages) {
              const identity = yield* identityOf(m)
              if (seen.has(identity)) continue
              seen.add(identity)
              rows.push({
                id: yield* newId(ids, MailMessageId),
                mailbox_id: mailbox.id,
                identity,
                folder: read.path,
                uid: m.uid,
                message_id: m.messageId,
                from_address: m.from ?? "",
                subject: m.subject,
                recipient: recipientOf(mailbox, m),
                received_at: m.internalDate,
                size_bytes: m.sizeBytes,
                has_attachments: m.hasAttachments,
                outcome: read.silent ? "history" : messageOutcome(m, {
                  mailbox: { address: mailbox.address, aliases: mailbox.aliases, personal: mailbox.owner_user_id !== null },
                  folder: read.kind,
                  syncedAtMs: startMs
                }),
                created_at: isoFromMillis(startMs)
              })
            }
          }
          return rows
        })

      const syncOne = (claim: ClaimedMailbox) =>
        Effect.gen(function*() {
          const startMs = yield* Clock.currentTimeMillis
          const mailbox = claim.mailbox
          const report = {
            mailbox_id: mailbox.id,
            organization_id: claim.tenant.organizationId,
            environment: claim.tenant.environment,
            first_sync: mailbox.baselined_at === null
          }
          const read = yield* Effect.gen(function*() {
            const secret = yield* box.open(mailbox.credential_sealed, mailboxCredentialContext(mailbox.id))
            const known = new Map((yield* repo.folders(mailbox.id)).map((f) => [f.path, f] as const))
            return yield* source.session({
              host: mailbox.imap_host,
              port: mailbox.imap_port,
              tls: mailbox.imap_tls,
              username: mailbox.imap_username,
              credential: { kind: mailbox.credential_kind, secret }
            }, (session) => readFolders(claim, session, startMs, known))
          }).pipe(
            Effect.catchTag("MailSourceError", (e) => Effect.succeed(e)),
            Effect.catchDefect((defect) =>
              Effect.logError("mail sync failed unexpectedly", defect).pipe(
                Effect.annotateLogs({ mailbox_id: mailbox.id }),
                Effect.as(new MailSourceError({ reason: "The sync failed unexpectedly; the operator's log has the cause" }))
              )
            )
          )

          if (read instanceof MailSourceError) {
            const nowMs = yield* Clock.currentTimeMillis
            const failures = mailbox.failures + 1
            const error = read.reason.slice(0, MAX_ERROR_LENGTH)
            const kept = yield* repo.finish(claim, {
              _tag: "Failed",
              at: isoFromMillis(nowMs),
              error,
              failures,
              nextSyncAt: isoFromMillis(nowMs + backoffMs(failures, settings.intervalSec * 1000))
            })
            yield* Effect.logWarning("mail sync failed").pipe(Effect.annotateLogs({ mailbox_id: mailbox.id, failures }))
            return { ...report, result: kept ? "failed" as const : "lease_lost" as const, stored: 0, events: 0, error }
          }

          const rows = yield* toStore(claim, read.reads, startMs)
          const outcome = yield* tx.withTransaction(Effect.gen(function*() {
            // Ending the lease first locks the mailbox row until commit: a sync that lost its lease writes
            // nothing, and the mailbox cannot be deleted under the rows this one stores.
            const nowMs = yield* Clock.currentTimeMillis
            const kept = yield* repo.finish(claim, {
              _tag: "Synced",
              at: isoFromMillis(nowMs),
              nextSyncAt: isoFromMillis(startMs + settings.intervalSec * 1000)
            })
            if (!kept) return yield* new LeaseLost()
            const inserted = new Set(yield* repo.insertMessages(claim.tenant, rows))
            let events = 0
            for (const row of rows) {
              if (!inserted.has(row.id) || row.outcome !== "emitted") continue
              yield* outbox.publish(claim.tenant, event("email.received", emailReceivedEventId(row.id), {
                object: "email_message",
                id: row.id,
                message_id: row.message_id,
                mailbox: mailbox.id,
                recipient: row.recipient,
                from: row.from_address,
                subject: row.subject,
                received_at: row.received_at,
                size_bytes: row.size_bytes,
                has_attachments: row.has_attachments
              }))
              events++
            }
            yield* repo.saveFolders(read.reads.map((r) => r.state))
            return { stored: inserted.size, events }
          })).pipe(Effect.catchTag("LeaseLost", () => Effect.succeed(undefined)))
          if (outcome === undefined) {
            yield* Effect.logWarning("mail sync lost its lease; another process syncs the mailbox").pipe(
              Effect.annotateLogs({ mailbox_id: mailbox.id })
            )
            return { ...report, result: "lease_lost" as const, stored: 0, events: 0, error: null }
          }
          return { ...report, result: "synced" as const, ...outcome, error: null }
        })

      const run = Effect.fn("MailSync.run")(function*(scope?: MailSyncScope) {
        const ranAt = isoFromMillis(yield* Clock.currentTimeMillis)
        const reports: Array<MailboxSyncReport> = []
        const done = new Set<string>()
        if (scope?.mailboxId !== undefined && !isUuid(scope.mailboxId)) return { ran_at: ranAt, mailboxes: reports }
        for (;;) {
          const nowMs = yield* Clock.currentTimeMillis
          const claimed = yield* tx.withTransaction(repo.claim({
            now: isoFromMillis(nowMs),
            leaseUntil: isoFromMillis(nowMs + settings.leaseMs),
            claimToken: yield* ids.uuid,
            limit: settings.concurrency,
            mailboxId: scope?.mailboxId,
            ignoreSchedule: scope?.ignoreSchedule,
            // A mailbox this run already synced is not synced twice (an on-demand run ignores the schedule).
            exclude: [...done]
          }))
          if (claimed.length === 0) break
          for (const c of claimed) done.add(c.mailbox.id)
          reports.push(...yield* Effect.forEach(
            claimed,
            // Stopped mid-sync (SIGTERM): nothing of it was kept, and the lease goes back so no process waits it out.
            (c) => syncOne(c).pipe(Effect.onInterrupt(() => repo.release(c))),
            { concurrency: settings.concurrency }
          ))
          if (claimed.length < settings.concurrency) break
        }
        return { ran_at: ranAt, mailboxes: reports }
      })

      return MailSync.of({ run })
    })
  )
}
