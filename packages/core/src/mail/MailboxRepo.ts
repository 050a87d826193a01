import { Context, Effect, Layer, type Option, Schema, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { Json, NullableNumeric, NullableTimestamp, Numeric, Timestamp } from "../shared/columns.ts"
import type { Conflict } from "../shared/errors.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie, uniqueAsConflict } from "../shared/sql.ts"
import { filterConditions, table, tenantTable } from "../shared/tables.ts"
import { Environment, type Tenant, type TenantScoped } from "../shared/tenant.ts"
import { FolderState, MailboxFilter, type MailboxId, StoredMailbox, StoredMessage } from "./model.ts"

export const mailboxConflicts = {
  mailboxes_address_unique: "Another mailbox of this environment already has this address"
}

export const MailboxRow = StoredMailbox.mapFields(Struct.assign({
  aliases: Json(StoredMailbox.fields.aliases),
  last_synced_at: NullableTimestamp,
  baselined_at: NullableTimestamp,
  next_sync_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp
}))

export const MessageRow = StoredMessage.mapFields(Struct.assign({
  uid: Numeric,
  size_bytes: NullableNumeric,
  received_at: Timestamp,
  created_at: Timestamp
}))

export const FolderRow = FolderState.mapFields(Struct.assign({ last_uid: Numeric, updated_at: Timestamp }))

/** A mailbox leased to one process for one sync. */
export interface ClaimedMailbox {
  readonly tenant: Tenant
  readonly mailbox: StoredMailbox
  readonly claimToken: string
}

export interface MailClaimRequest {
  readonly now: string
  readonly leaseUntil: string
  readonly claimToken: string
  readonly limit: number
  /** Only this mailbox. */
  readonly mailboxId?: string | undefined
  /** Due or not (an operator's on-demand run); a mailbox another process holds is still skipped. */
  readonly ignoreSchedule?: boolean | undefined
  /** Mailboxes not to claim (those the caller already synced in this run). */
  readonly exclude?: ReadonlyArray<string> | undefined
}

/** How a sync ended, written back only while the lease is still the writer's. */
export type SyncEnd =
  | { readonly _tag: "Synced"; readonly at: string; readonly nextSyncAt: string }
  | { readonly _tag: "Failed"; readonly at: string; readonly error: string; readonly failures: number; readonly nextSyncAt: string }

/**
 * Storage port for mailboxes, the state of their folders and the messages a
 * sync stored. The store guarantees one mailbox per address in an organization
 * environment and one stored message per identity in a mailbox (a second
 * sight of it inserts nothing). A sync leases its mailbox with `claim`
 * (skipping any another process holds) and ends with `finish`, which writes
 * only while the lease is still the claimer's.
 */
export class MailboxRepo extends Context.Service<MailboxRepo, TenantScoped<{
  readonly insert: (tenant: Tenant, mailbox: StoredMailbox) => Effect.Effect<void, Conflict>
  /** The tenant's mailboxes; inside a transaction, under a lock that makes a cap hold under concurrent creates. */
  readonly countLocked: (tenant: Tenant) => Effect.Effect<number>
  readonly update: (tenant: Tenant, mailbox: StoredMailbox) => Effect.Effect<void, Conflict>
  readonly find: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<StoredMailbox>>
  readonly list: (tenant: Tenant, filter: MailboxFilter, page: PageRequest) => Effect.Effect<Page<StoredMailbox>>
  readonly remove: (tenant: Tenant, id: string) => Effect.Effect<boolean>
  /**
   * The connection changed: any lease and backoff are dropped and a sync is
   * due now; with `forgetFolders` (another server or account) the folders'
   * state goes too, so the next sync is a first one.
   */
  readonly resetSync: (tenant: Tenant, id: MailboxId, forgetFolders: boolean) => Effect.Effect<void>
  /** Stores the messages; answers the ids of those that were new (an identity already stored inserts nothing). */
  readonly insertMessages: (tenant: Tenant, messages: ReadonlyArray<StoredMessage>) => Effect.Effect<ReadonlyArray<string>>
  readonly findMessage: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<StoredMessage>>
  /** Cross-tenant: a sync process leases whatever is due, of every organization. */
  readonly claim: (request: MailClaimRequest) => Effect.Effect<ReadonlyArray<ClaimedMailbox>>
  /** Cross-tenant: the folders of a claimed mailbox. */
  readonly folders: (mailboxId: MailboxId) => Effect.Effect<ReadonlyArray<FolderState>>
  /** Cross-tenant: inserts or replaces the folders' state. */
  readonly saveFolders: (folders: ReadonlyArray<FolderState>) => Effect.Effect<void>
  /** Cross-tenant: ends a sync and releases the lease; false when the lease was no longer the claimer's. */
  readonly finish: (claim: ClaimedMailbox, end: SyncEnd) => Effect.Effect<boolean>
  /** Cross-tenant: gives the lease back unchanged otherwise (a process stopping mid-sync), so the next pass may take it. */
  readonly release: (claim: ClaimedMailbox) => Effect.Effect<void>
}, "claim" | "folders" | "saveFolders" | "finish" | "release">>()("@opsplatform/core/mail/MailboxRepo") {
  static readonly layerSql: Layer.Layer<MailboxRepo, never, SqlClient.SqlClient> = Layer.effect(
    MailboxRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const conflicts = uniqueAsConflict(mailboxConflicts)
      // The sync writes its bookkeeping through `finish` and `resetSync`; a change by request never overwrites it.
      const mailboxes = tenantTable(sql, {
        name: "mailboxes",
        row: MailboxRow,
        fixed: ["last_synced_at", "last_error", "baselined_at", "failures", "next_sync_at", "created_at"]
      })
      const messages = tenantTable(sql, { name: "mail_messages", row: MessageRow })
      const messageColumns = table(sql, { name: "mail_messages", row: MessageRow }).columns
      const encodeFolder = Schema.encodeEffect(FolderRow)
      const decodeFolders = Schema.decodeUnknownEffect(Schema.Array(FolderRow))
      const decodeClaimed = Schema.decodeUnknownEffect(Schema.Array(MailboxRow.mapFields(Struct.assign({
        organization_id: Schema.String,
        environment: Environment,
        claim_token: Schema.String
      }))))

      return MailboxRepo.of({
        insert: (tenant, m) => conflicts(mailboxes.insert(tenant, m)),
        countLocked: mailboxes.countLocked,
        update: (tenant, m) => conflicts(mailboxes.update(tenant, m)).pipe(Effect.asVoid),
        find: (tenant, id) => mailboxes.findById(tenant, id),
        list: (tenant, filter, page) =>
          mailboxes.page(tenant, filterConditions(sql, MailboxFilter, filter), page),
        remove: (tenant, id) => Effect.map(mailboxes.remove(tenant, [sql`id = ${id}`]), (n) => n > 0),
        resetSync: (tenant, id, forgetFolders) => {
          const cleared = sql`UPDATE mailboxes SET locked_until = NULL, claim_token = NULL, failures = 0, next_sync_at = NULL,
              last_error = NULL, baselined_at = ${forgetFolders ? sql`NULL` : sql`baselined_at`}
            WHERE ${mailboxes.where(tenant, [sql`id = ${id}`])} RETURNING id`
          return orDie(
            forgetFolders
              ? sql`WITH cleared AS (${cleared}) DELETE FROM mail_folders WHERE mailbox_id IN (SELECT id FROM cleared)`
              : cleared
          ).pipe(Effect.asVoid)
        },
        insertMessages: (tenant, rows) =>
          Effect.gen(function*() {
            const values = yield* Effect.forEach(rows, messageColumns)
            const [first, ...rest] = values.map((v) => ({ ...v, organization_id: tenant.organizationId, environment: tenant.environment }))
            if (first === undefined) return []
            const inserted = yield* orDie(sql<{ readonly id: string }>`INSERT INTO mail_messages ${sql.insert([first, ...rest])}
              ON CONFLICT ON CONSTRAINT mail_messages_once DO NOTHING RETURNING id`)
            return inserted.map((r) => r.id)
          }),
        findMessage: (tenant, id) => messages.findById(tenant, id),
        claim: ({ claimToken, exclude, ignoreSchedule, leaseUntil, limit, mailboxId, now }) =>
          orDie(sql`WITH due AS (
              SELECT id FROM mailboxes
              WHERE ${sql.and([
                sql`enabled`,
                sql`(locked_until IS NULL OR locked_until <= ${now})`,
                ...(ignoreSchedule ? [] : [sql`(next_sync_at IS NULL OR next_sync_at <= ${now})`]),
                ...(mailboxId === undefined ? [] : [sql`id = ${mailboxId}`]),
                ...(exclude === undefined || exclude.length === 0 ? [] : [sql`NOT ${sql.in("id", exclude)}`])
              ])}
              ORDER BY next_sync_at NULLS FIRST, id
              LIMIT ${limit}
              FOR UPDATE SKIP LOCKED
            )
            UPDATE mailboxes m SET locked_until = ${leaseUntil}, claim_token = ${claimToken}
            FROM due WHERE m.id = due.id
            RETURNING m.*`).pipe(
            Effect.flatMap((rows) => Effect.orDie(decodeClaimed(rows))),
            Effect.map((rows) =>
              rows.map(({ claim_token, environment, organization_id, ...mailbox }) => ({
                tenant: { organizationId: organization_id, environment },
                mailbox: mailbox as StoredMailbox,
                claimToken: claim_token
              }))
            )
          ),
        folders: (mailboxId) =>
          orDie(sql`SELECT * FROM mail_folders WHERE mailbox_id = ${mailboxId} ORDER BY path`).pipe(
            Effect.flatMap((rows) => Effect.orDie(decodeFolders(rows)))
          ),
        saveFolders: (folders) =>
          Effect.gen(function*() {
            const [first, ...rest] = yield* Effect.forEach(folders, (f) => Effect.orDie(encodeFolder(f)))
            if (first === undefined) return
            yield* orDie(sql`INSERT INTO mail_folders ${sql.insert([first, ...rest])}
              ON CONFLICT (mailbox_id, path) DO UPDATE SET uid_validity = EXCLUDED.uid_validity,
                last_uid = EXCLUDED.last_uid, updated_at = EXCLUDED.updated_at`)
          }),
        finish: (claim, end) =>
          orDie(
            end._tag === "Synced"
              ? sql`UPDATE mailboxes SET last_synced_at = ${end.at}, last_error = NULL, failures = 0,
                  baselined_at = COALESCE(baselined_at, ${end.at}), next_sync_at = ${end.nextSyncAt},
                  locked_until = NULL, claim_token = NULL
                WHERE id = ${claim.mailbox.id} AND claim_token = ${claim.claimToken} RETURNING id`
              : sql`UPDATE mailboxes SET last_error = ${end.error}, failures = ${end.failures},
                  next_sync_at = ${end.nextSyncAt}, locked_until = NULL, claim_token = NULL
                WHERE id = ${claim.mailbox.id} AND claim_token = ${claim.claimToken} RETURNING id`
          ).pipe(Effect.map((rows) => rows.length > 0)),
        release: (claim) =>
          orDie(sql`UPDATE mailboxes SET locked_until = NULL, claim_token = NULL
            WHERE id = ${claim.mailbox.id} AND claim_token = ${claim.claimToken}`).pipe(Effect.asVoid)
      })
    })
  )
}
