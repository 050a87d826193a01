import { Context, Effect, Layer, Schema } from "effect"
import { Conflict, NotFound, ValidationFailed, type ErrorDetail } from "../shared/errors.ts"
import { Ids, newId } from "../shared/Ids.ts"
import { findOr404 } from "../shared/lookup.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import type { Tenant } from "../shared/tenant.ts"
import { nowIso } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { Tenancy } from "../tenancy/Tenancy.ts"
import { SecretBox } from "../webhooks/SecretBox.ts"
import { MailboxRepo } from "./MailboxRepo.ts"
import {
  type ImapSettingsCreate,
  type ImapSettingsUpdate,
  type Mailbox,
  type MailboxCreate,
  type MailboxFilter,
  MailboxId,
  type MailboxOwner,
  type MailboxUpdate,
  type StoredMailbox,
  toMailbox
} from "./model.ts"
import { checkImapHost, defaultPort } from "./rules.ts"
import { MailSettings } from "./settings.ts"

/** What a sealed mailbox credential is bound to: its own mailbox, so a sealed value cannot be moved to another. */
export const mailboxCredentialContext = (mailboxId: string): string => `mailbox-credential:${mailboxId}`

const isMailboxId = Schema.is(MailboxId)

/** The one credential a request gives: a password or an access token, never both. */
const credentialOf = (
  imap: ImapSettingsCreate | ImapSettingsUpdate,
  required: boolean
): { readonly kind: "password" | "access_token"; readonly secret: string } | ReadonlyArray<ErrorDetail> | undefined => {
  if (imap.password !== undefined && imap.access_token !== undefined) {
    return [{ field: "imap.access_token", issue: "give a password or an access token, not both" }]
  }
  if (imap.password !== undefined) return { kind: "password", secret: imap.password }
  if (imap.access_token !== undefined) return { kind: "access_token", secret: imap.access_token }
  return required ? [{ field: "imap.password", issue: "a password or an access_token is required" }] : undefined
}

/**
 * Mailboxes of an organization environment: the address and aliases, the
 * owner, and the IMAP server with its credential, sealed at rest and never
 * returned. Syncing them is MailSync's.
 */
export class Mailboxes extends Context.Service<Mailboxes, {
  /** At most `maxMailboxes` per organization environment: past it, 409. */
  readonly create: (tenant: Tenant, input: MailboxCreate) => Effect.Effect<Mailbox, ValidationFailed | Conflict>
  readonly get: (tenant: Tenant, id: string) => Effect.Effect<Mailbox, NotFound>
  readonly list: (tenant: Tenant, filter: MailboxFilter, page: PageRequest) => Effect.Effect<Page<Mailbox>>
  readonly update: (
    tenant: Tenant,
    id: string,
    patch: MailboxUpdate
  ) => Effect.Effect<Mailbox, NotFound | ValidationFailed | Conflict>
  readonly remove: (tenant: Tenant, id: string) => Effect.Effect<void, NotFound>
}>()("@opsplatform/core/mail/Mailboxes") {
  static readonly layer: Layer.Layer<Mailboxes, never, MailboxRepo | Tenancy | SecretBox | Ids | Transactor> = Layer.effect(
    Mailboxes,
    Effect.gen(function*() {
      const repo = yield* MailboxRepo
      const tenancy = yield* Tenancy
      const box = yield* SecretBox
      const ids = yield* Ids
      const tx = yield* Transactor
      const settings = yield* MailSettings

      const find = (tenant: Tenant, id: string) => findOr404("mailbox", id, (id) => repo.find(tenant, id))

      /**
       * Every rule across fields, reported together. A change checks the server
       * and the owner only when it sets them, so a mailbox stays editable when
       * its member leaves or the operator's host policy tightens.
       */
      const check = Effect.fnUntraced(function*(
        tenant: Tenant,
        m: StoredMailbox,
        owner: MailboxOwner,
        changed: { readonly server: boolean; readonly owner: boolean }
      ) {
        const details: Array<ErrorDetail> = changed.server
          ? [...checkImapHost(m.imap_host, m.imap_tls, tenant.environment, settings.allowPrivateHosts)]
          : []
        const address = m.address.toLowerCase()
        const aliasIndex = m.aliases.findIndex((a) => a.toLowerCase() === address)
        if (aliasIndex >= 0) details.push({ field: `aliases[${aliasIndex}]`, issue: "is the mailbox's own address" })
        if (changed.owner && owner.type === "member") {
          const member = yield* Effect.result(tenancy.getMember(tenant.organizationId, owner.user_id))
          if (member._tag === "Failure") details.push({ field: "owner.user_id", issue: "is not a member of this organization" })
        }
        if (details.length > 0) return yield* new ValidationFailed({ details })
      })

      return Mailboxes.of({
        create: Effect.fn("Mailboxes.create")(function*(tenant, input) {
          const credential = credentialOf(input.imap, true)
          if (credential === undefined || Array.isArray(credential)) {
            return yield* new ValidationFailed({ details: credential ?? [] })
          }
          const { kind, secret } = credential as { readonly kind: "password" | "access_token"; readonly secret: string }
          const now = yield* nowIso
          const id = yield* newId(ids, MailboxId)
          const owner = input.owner ?? { type: "organization" as const }
          const tls = input.imap.tls ?? "implicit"
          const mailbox: StoredMailbox = {
            id,
            address: input.address,
            aliases: input.aliases ?? [],
            owner_user_id: owner.type === "member" ? owner.user_id : null,
            imap_host: input.imap.host,
            imap_port: input.imap.port ?? defaultPort(tls),
            imap_tls: tls,
            imap_username: input.imap.username,
            credential_kind: kind,
            credential_sealed: "",
            enabled: input.enabled ?? true,
            last_synced_at: null,
            last_error: null,
            baselined_at: null,
            failures: 0,
            next_sync_at: null,
            created_at: now,
            updated_at: now
          }
          yield* check(tenant, mailbox, owner, { server: true, owner: true })
          const sealed = yield* box.seal(secret, mailboxCredentialContext(id))
          yield* tx.withTransaction(Effect.gen(function*() {
            if ((yield* repo.countLocked(tenant)) >= settings.maxMailboxes) {
              return yield* new Conflict({
                reason: `This environment has ${settings.maxMailboxes} mailboxes, the most it may have; delete one first`
              })
            }
            yield* repo.insert(tenant, { ...mailbox, credential_sealed: sealed })
          }))
          return toMailbox(mailbox)
        }),
        get: (tenant, id) => Effect.map(find(tenant, id), toMailbox),
        list: (tenant, filter, page) =>
          Effect.map(repo.list(tenant, filter, page), (found) => ({ items: found.items.map(toMailbox), meta: found.meta })),
        update: Effect.fn("Mailboxes.update")(function*(tenant, id, patch) {
          const credential = patch.imap === undefined ? undefined : credentialOf(patch.imap, false)
          if (Array.isArray(credential)) return yield* new ValidationFailed({ details: credential })
          const newCredential = credential as { readonly kind: "password" | "access_token"; readonly secret: string } | undefined
          const sealed = newCredential === undefined || !isMailboxId(id)
            ? undefined
            : yield* box.seal(newCredential.secret, mailboxCredentialContext(id))
          return yield* tx.withTransaction(Effect.gen(function*() {
            const current = yield* find(tenant, id)
            const imap = patch.imap ?? {}
            const owner = patch.owner ?? toMailbox(current).owner
            const next: StoredMailbox = {
              ...current,
              address: patch.address ?? current.address,
              aliases: patch.aliases ?? current.aliases,
              owner_user_id: owner.type === "member" ? owner.user_id : null,
              imap_host: imap.host ?? current.imap_host,
              imap_port: imap.port ?? current.imap_port,
              imap_tls: imap.tls ?? current.imap_tls,
              imap_username: imap.username ?? current.imap_username,
              credential_kind: newCredential?.kind ?? current.credential_kind,
              credential_sealed: sealed ?? current.credential_sealed,
              enabled: patch.enabled ?? current.enabled,
              updated_at: yield* nowIso
            }
            yield* check(tenant, next, owner, {
              server: patch.imap?.host !== undefined || patch.imap?.tls !== undefined,
              owner: patch.owner !== undefined
            })
            yield* repo.update(tenant, next)
            // Another server or account has other folders: its first sync records history silently (docs/decisions.md, Mail).
            const otherAccount = next.imap_host.toLowerCase() !== current.imap_host.toLowerCase() ||
              next.imap_port !== current.imap_port || next.imap_username !== current.imap_username
            const reconnect = otherAccount || next.imap_tls !== current.imap_tls || sealed !== undefined ||
              (next.enabled && !current.enabled)
            if (reconnect) yield* repo.resetSync(tenant, current.id, otherAccount)
            return toMailbox(yield* find(tenant, id))
          }))
        }),
        remove: Effect.fn("Mailboxes.remove")(function*(tenant, id) {
          const removed = isMailboxId(id) && (yield* repo.remove(tenant, id))
          if (!removed) return yield* new NotFound({ resource: "mailbox", id })
        })
      })
    })
  )
}
