import { Effect, Layer } from "effect"
import { type ClaimedMailbox, mailboxConflicts, MailboxRepo } from "@opsplatform/core/mail/MailboxRepo"
import { type FolderState, MailboxFilter, type StoredMailbox, type StoredMessage } from "@opsplatform/core/mail/model"
import { Conflict } from "@opsplatform/core/shared/errors"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { MemoryStore } from "./MemoryStore.ts"
import { filterPredicates, inTenant, memoryTenantTable, type Scoped } from "./rows.ts"

const ms = (iso: string) => Date.parse(iso)

/** The lease of a mailbox, kept beside it as the SQL table keeps its two columns. */
interface Lease {
  readonly lockedUntil: string | null
  readonly claimToken: string | null
}

/**
 * The mail tables in memory, with the SQL schema's guarantees: one mailbox
 * per address (any case) in an organization environment, one stored message
 * per identity in a mailbox, folders and messages gone with their mailbox.
 */
export const MailboxRepoMemory: Layer.Layer<MailboxRepo, never, MemoryStore> = Layer.effect(
  MailboxRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const mailboxes = memoryTenantTable<StoredMailbox>(store, "mailboxes")
    const messages = memoryTenantTable<StoredMessage>(store, "mail_messages")
    const folders = store.table<FolderState>("mail_folders")
    const leases = store.table<Lease>("mailbox_leases")
    const folderKey = (mailboxId: string, path: string) => `${mailboxId}\u0000${path}`

    const check = (tenant: Tenant, m: StoredMailbox) =>
      mailboxes.filter(tenant, (o) => o.id !== m.id && o.address.toLowerCase() === m.address.toLowerCase()).length > 0
        ? Effect.fail(new Conflict({ reason: mailboxConflicts.mailboxes_address_unique }))
        : Effect.void

    /** Writes the sync's columns of a mailbox, whatever its tenant (the row keeps its own). */
    const patchRow = (id: string, change: Partial<StoredMailbox>) => {
      const row = mailboxes.rows.get(id)
      if (row !== undefined) mailboxes.rows.set(id, { ...row, ...change })
    }

    const forgetFolders = (mailboxId: string) => {
      for (const [key, f] of folders) if (f.mailbox_id === mailboxId) folders.delete(key)
    }

    return MailboxRepo.of({
      insert: (tenant, m) => Effect.andThen(check(tenant, m), Effect.sync(() => mailboxes.insert(tenant, m))),
      countLocked: (tenant) => Effect.sync(() => mailboxes.filter(tenant).length),
      update: (tenant, m) =>
        Effect.andThen(
          check(tenant, m),
          Effect.sync(() => {
            const current = mailboxes.find(tenant, m.id)
            if (current._tag === "None") return
            // As the SQL update: the sync's bookkeeping is never written by a change on request.
            const c = current.value
            mailboxes.update(tenant, {
              ...m,
              last_synced_at: c.last_synced_at,
              last_error: c.last_error,
              baselined_at: c.baselined_at,
              failures: c.failures,
              next_sync_at: c.next_sync_at,
              created_at: c.created_at
            })
          })
        ),
      find: (tenant, id) => Effect.sync(() => mailboxes.find(tenant, id)),
      list: (tenant, filter, page) =>
        Effect.sync(() => mailboxes.page(tenant, filterPredicates(MailboxFilter, filter), page)),
      remove: (tenant, id) =>
        Effect.sync(() => {
          if (!mailboxes.remove(tenant, id)) return false
          forgetFolders(id)
          leases.delete(id)
          for (const m of messages.filter(tenant, (m) => m.mailbox_id === id)) messages.remove(tenant, m.id)
          return true
        }),
      resetSync: (tenant, id, forget) =>
        Effect.sync(() => {
          const current = mailboxes.find(tenant, id)
          if (current._tag === "None") return
          leases.delete(id)
          patchRow(id, {
            failures: 0,
            next_sync_at: null,
            last_error: null,
            baselined_at: forget ? null : current.value.baselined_at
          })
          if (forget) forgetFolders(id)
        }),
      insertMessages: (tenant, rows) =>
        Effect.sync(() => {
          const inserted: Array<string> = []
          for (const row of rows) {
            const taken = [...messages.rows.values()].some((m) => m.mailbox_id === row.mailbox_id && m.identity === row.identity)
            if (taken) continue
            messages.insert(tenant, row)
            inserted.push(row.id)
          }
          return inserted
        }),
      findMessage: (tenant, id) => Effect.sync(() => messages.find(tenant, id)),
      claim: ({ claimToken, exclude, ignoreSchedule, leaseUntil, limit, mailboxId, now }) =>
        Effect.sync(() => {
          const due = [...mailboxes.rows.values()].filter((m) => {
            const lease = leases.get(m.id)
            return m.enabled &&
              (lease?.lockedUntil == null || ms(lease.lockedUntil) <= ms(now)) &&
              (ignoreSchedule || m.next_sync_at === null || ms(m.next_sync_at) <= ms(now)) &&
              (mailboxId === undefined || m.id === mailboxId) &&
              !(exclude ?? []).includes(m.id)
          }).sort((a, b) =>
            (a.next_sync_at === null ? -Infinity : ms(a.next_sync_at)) - (b.next_sync_at === null ? -Infinity : ms(b.next_sync_at)) ||
            (a.id < b.id ? -1 : 1)
          ).slice(0, limit)
          return due.map((row: Scoped<StoredMailbox>): ClaimedMailbox => {
            leases.set(row.id, { lockedUntil: leaseUntil, claimToken })
            const { environment, organization_id, ...mailbox } = row
            return { tenant: { organizationId: organization_id, environment }, mailbox, claimToken }
          })
        }),
      folders: (mailboxId) =>
        Effect.sync(() => [...folders.values()].filter((f) => f.mailbox_id === mailboxId).sort((a, b) => (a.path < b.path ? -1 : 1))),
      saveFolders: (list) =>
        Effect.sync(() => {
          for (const f of list) {
            if (mailboxes.rows.has(f.mailbox_id)) folders.set(folderKey(f.mailbox_id, f.path), f)
          }
        }),
      finish: (claim, end) =>
        Effect.sync(() => {
          const lease = leases.get(claim.mailbox.id)
          const row = mailboxes.rows.get(claim.mailbox.id)
          if (row === undefined || !inTenant(claim.tenant)(row) || lease?.claimToken !== claim.claimToken) return false
          leases.delete(claim.mailbox.id)
          patchRow(claim.mailbox.id, end._tag === "Synced"
            ? {
              last_synced_at: end.at,
              last_error: null,
              failures: 0,
              baselined_at: row.baselined_at ?? end.at,
              next_sync_at: end.nextSyncAt
            }
            : { last_error: end.error, failures: end.failures, next_sync_at: end.nextSyncAt })
          return true
        }),
      release: (claim) =>
        Effect.sync(() => {
          if (leases.get(claim.mailbox.id)?.claimToken === claim.claimToken) leases.delete(claim.mailbox.id)
        })
    })
  })
)
