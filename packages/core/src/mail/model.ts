import { Schema, Struct } from "effect"
import { QueryBoolean } from "../shared/filters.ts"
import { isMaxChars, IsoDateTime, isPattern, Uuid } from "../shared/schemas.ts"
import { UserId } from "../tenancy/model.ts"

export const MailboxId = Uuid.pipe(Schema.brand("MailboxId"))
export type MailboxId = typeof MailboxId.Type

/** A stored message's id; the `email.received` event id is derived from it. */
export const MailMessageId = Uuid.pipe(Schema.brand("MailMessageId"))
export type MailMessageId = typeof MailMessageId.Type

export const MAX_ALIASES = 50

/**
 * A local part, `@`, and a domain with a dot that is neither its first nor its
 * last character. Written so no two quantifiers can trade characters (the
 * domain's first dot after its first character ends the run before it), it
 * matches in linear time; `isMaxChars` refuses a longer string before the
 * pattern runs (decided: docs/decisions.md, "Limits and ranges").
 */
export const EmailAddress = Schema.String.check(
  isMaxChars(254),
  isPattern(/^[^\s",;<>@]+@[^\s",;<>@][^\s",.;<>@]*\.[^\s",;<>@]+$/, {
    message: "must be an email address, e.g. sales@example.com"
  })
)

const Aliases = Schema.Array(EmailAddress).check(
  Schema.isMaxLength(MAX_ALIASES),
  Schema.makeFilter((list: ReadonlyArray<string>) =>
    new Set(list.map((a) => a.toLowerCase())).size === list.length || "must not repeat an address"
  )
).annotate({ description: `Other addresses delivered to this mailbox (at most ${MAX_ALIASES})` })

/**
 * Whose mailbox it is: the organization's (its messages raise `email.received`),
 * or one member's personal mailbox (never raises it).
 */
export const MailboxOwner = Schema.Union([
  Schema.Struct({ type: Schema.Literal("organization") }),
  Schema.Struct({ type: Schema.Literal("member"), user_id: UserId })
]).annotate({ identifier: "MailboxOwner" })
export type MailboxOwner = typeof MailboxOwner.Type

/** How the connection is protected: TLS from the first byte (993), STARTTLS required (143), or none (sandbox only). */
export const ImapTls = Schema.Literals(["implicit", "starttls", "none"])
export type ImapTls = typeof ImapTls.Type

/**
 * A bracketed or bare IPv6 address (hex digits, colons and dots, a colon
 * before any dot), or a host name of labels that start and end with a letter
 * or digit. Each alternative reads its characters one way only, so a failing
 * value costs linear time (decided: docs/decisions.md, "Limits and ranges").
 */
export const Host = Schema.String.check(
  isMaxChars(253),
  isPattern(/^(?:\[[\d.:A-Fa-f]+\]|[\dA-Fa-f]*:[\d.:A-Fa-f]+|[\dA-Za-z]+(?:-+[\dA-Za-z]+)*(?:\.[\dA-Za-z]+(?:-+[\dA-Za-z]+)*)*\.?)$/, {
    message: "must be a host name or an IP address, without a scheme or a port"
  })
)
const Port = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 65_535 }))
const Username = Schema.String.check(
  Schema.makeFilter((s: string) => s.trim().length > 0 || "must not be blank"),
  Schema.isMaxLength(320)
)
const Secret = (max: number) =>
  Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(max))

/** The IMAP server of a mailbox as the API shows it: never the password or token. */
export const ImapSettings = Schema.Struct({
  host: Host,
  port: Port,
  tls: ImapTls,
  username: Username,
  auth: Schema.Literals(["password", "access_token"]).annotate({
    description: "How the mailbox signs in; the password or token itself is never returned"
  })
}).annotate({ identifier: "ImapSettings" })
export type ImapSettings = typeof ImapSettings.Type

export const Mailbox = Schema.Struct({
  id: MailboxId,
  address: EmailAddress,
  aliases: Aliases,
  owner: MailboxOwner,
  imap: ImapSettings,
  enabled: Schema.Boolean,
  last_synced_at: Schema.NullOr(IsoDateTime),
  last_error: Schema.NullOr(Schema.String),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "Mailbox" })
export type Mailbox = typeof Mailbox.Type

/** What a caller sends about the IMAP server: the settings and exactly one of a password or an OAuth access token. */
const ImapInputFields = {
  host: Host,
  port: Schema.optionalKey(Port.annotate({ description: "Default 993 with implicit TLS, 143 otherwise" })),
  tls: Schema.optionalKey(ImapTls.annotate({ description: "Default implicit" })),
  username: Username,
  password: Schema.optionalKey(Secret(1024).annotate({ description: "Sealed at rest; never returned" })),
  access_token: Schema.optionalKey(Secret(8192).annotate({ description: "OAuth 2.0 access token (XOAUTH2); sealed at rest; never returned" }))
}

export const ImapSettingsCreate = Schema.Struct(ImapInputFields).annotate({ identifier: "ImapSettingsCreate" })
export type ImapSettingsCreate = typeof ImapSettingsCreate.Type

export const ImapSettingsUpdate = Schema.Struct(ImapInputFields).mapFields(Struct.map(Schema.optionalKey)).annotate({
  identifier: "ImapSettingsUpdate"
})
export type ImapSettingsUpdate = typeof ImapSettingsUpdate.Type

const Editable = Mailbox.mapFields(Struct.pick(["address", "aliases", "owner", "enabled"]))

/** The address and the IMAP server are required; no aliases, the organization as owner and enabled by default. */
export const MailboxCreate = Editable.mapFields(Struct.mapOmit(["address"], Schema.optionalKey)).mapFields(
  Struct.assign({ imap: ImapSettingsCreate })
).annotate({ identifier: "MailboxCreate" })
export type MailboxCreate = typeof MailboxCreate.Type

export const MailboxUpdate = Editable.mapFields(Struct.map(Schema.optionalKey)).mapFields(
  Struct.assign({ imap: Schema.optionalKey(ImapSettingsUpdate) })
).annotate({ identifier: "MailboxUpdate" })
export type MailboxUpdate = typeof MailboxUpdate.Type

export const MailboxFilter = Schema.Struct({ enabled: Schema.optionalKey(QueryBoolean) })
export type MailboxFilter = typeof MailboxFilter.Type

/**
 * A mailbox as stored: the resource flattened into columns, with the sealed
 * credential and the sync bookkeeping the API never shows.
 */
export const StoredMailbox = Schema.Struct({
  id: MailboxId,
  address: Schema.String,
  aliases: Schema.Array(Schema.String),
  owner_user_id: Schema.NullOr(Schema.String),
  imap_host: Schema.String,
  imap_port: Schema.Int,
  imap_tls: ImapTls,
  imap_username: Schema.String,
  credential_kind: Schema.Literals(["password", "access_token"]),
  credential_sealed: Schema.String,
  enabled: Schema.Boolean,
  last_synced_at: Schema.NullOr(IsoDateTime),
  last_error: Schema.NullOr(Schema.String),
  /** Set by the first successful sync, which records history silently; cleared when the server changes. */
  baselined_at: Schema.NullOr(IsoDateTime),
  /** Failed syncs in a row, for the backoff. */
  failures: Schema.Int,
  /** When the next sync is due (null: now). */
  next_sync_at: Schema.NullOr(IsoDateTime),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
})
export type StoredMailbox = typeof StoredMailbox.Type

export const toMailbox = (m: StoredMailbox): Mailbox => ({
  id: m.id,
  address: m.address,
  aliases: m.aliases,
  owner: m.owner_user_id === null
    ? { type: "organization" }
    : { type: "member", user_id: m.owner_user_id as UserId },
  imap: { host: m.imap_host, port: m.imap_port, tls: m.imap_tls, username: m.imap_username, auth: m.credential_kind },
  enabled: m.enabled,
  last_synced_at: m.last_synced_at,
  last_error: m.last_error,
  created_at: m.created_at,
  updated_at: m.updated_at
})

/** What a sync made of a message (kept with it, so a later sight of the same message changes nothing). */
export const MessageOutcome = Schema.Literals([
  "emitted",
  "history",
  "excluded_folder",
  "excluded_flag",
  "own_message",
  "too_old",
  "personal_mailbox"
])
export type MessageOutcome = typeof MessageOutcome.Type

/** A stored message: headers and size only, never a body. */
export const StoredMessage = Schema.Struct({
  id: MailMessageId,
  mailbox_id: MailboxId,
  /** What makes two sightings the same message (see `messageIdentity`). */
  identity: Schema.String,
  folder: Schema.String,
  uid: Schema.Int,
  message_id: Schema.NullOr(Schema.String),
  from_address: Schema.String,
  subject: Schema.String,
  recipient: Schema.String,
  received_at: IsoDateTime,
  size_bytes: Schema.NullOr(Schema.Int),
  has_attachments: Schema.Boolean,
  outcome: MessageOutcome,
  created_at: IsoDateTime
})
export type StoredMessage = typeof StoredMessage.Type

/** Where a folder's sync stands: the UIDVALIDITY it was read under and the highest UID seen. */
export const FolderState = Schema.Struct({
  mailbox_id: MailboxId,
  path: Schema.String,
  uid_validity: Schema.String,
  last_uid: Schema.Int,
  updated_at: IsoDateTime
})
export type FolderState = typeof FolderState.Type
