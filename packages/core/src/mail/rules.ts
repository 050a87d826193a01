import type { Environment } from "../shared/tenant.ts"
import { isIpLiteral, isLocalName, isPublicAddress } from "../webhooks/destinations.ts"
import type { MessageOutcome } from "./model.ts"
import type { RemoteFolder, RemoteMessage } from "./MailSource.ts"

/**
 * The rules of `email.received` (spec: Events; decided details in
 * docs/decisions.md, "Mail"), as pure functions over what a sync read.
 */

/** Only messages received within this long before the sync qualify (spec: email.received recency). */
export const RECENCY_MS = 24 * 60 * 60 * 1000

export type FolderKind = "inbox" | "custom" | "archive" | "junk" | "trash" | "drafts" | "sent" | "all" | "flagged"

const bySpecialUse: Record<string, FolderKind> = {
  "\\inbox": "inbox",
  "\\junk": "junk",
  "\\trash": "trash",
  "\\drafts": "drafts",
  "\\sent": "sent",
  "\\all": "all",
  "\\flagged": "flagged",
  "\\archive": "archive"
}

/**
 * Names read as special-use folders on servers that report no attribute
 * (the IMAP adapter also reads localized names); compared case-insensitively
 * against the folder's last name segment.
 */
const byName: Record<string, FolderKind> = {
  spam: "junk",
  junk: "junk",
  "junk e-mail": "junk",
  "junk email": "junk",
  "bulk mail": "junk",
  trash: "trash",
  bin: "trash",
  "deleted items": "trash",
  "deleted messages": "trash",
  drafts: "drafts",
  draft: "drafts",
  sent: "sent",
  "sent items": "sent",
  "sent mail": "sent",
  "sent messages": "sent",
  outbox: "sent",
  "all mail": "all"
}

/** What a folder is: by its special-use attribute, else by its name; INBOX is the inbox whatever the server says. */
export const folderKind = (folder: RemoteFolder, delimiter = "/"): FolderKind => {
  if (folder.path.toUpperCase() === "INBOX") return "inbox"
  const special = folder.specialUse === null ? undefined : bySpecialUse[folder.specialUse.toLowerCase()]
  if (special !== undefined) return special
  const segments = folder.path.split(delimiter)
  const last = (segments[segments.length - 1] ?? folder.path).trim().toLowerCase()
  return byName[last] ?? byName[folder.path.trim().toLowerCase()] ?? "custom"
}

/**
 * The folders whose new messages are inbound mail: the inbox and the
 * organization's own folders (an archive is one). Spam, trash, drafts and
 * sent never are; `\All` and `\Flagged` only show messages of other folders again.
 */
export const isInboundFolder = (kind: FolderKind): boolean => kind === "inbox" || kind === "custom" || kind === "archive"

/**
 * Flags that mark a message as not inbound wherever it sits: a draft, a
 * message deleted in place (trash without a Trash folder), or one a client
 * marked as spam (`$Junk`, `Junk`).
 */
export const isExcludedByFlags = (flags: ReadonlyArray<string>): boolean =>
  flags.some((f) => {
    const flag = f.toLowerCase()
    return flag === "\\draft" || flag === "\\deleted" || flag === "$junk" || flag === "junk"
  })

/** The mailbox's own addresses, lower case. */
export const ownAddresses = (mailbox: { readonly address: string; readonly aliases: ReadonlyArray<string> }) =>
  [mailbox.address, ...mailbox.aliases].map((a) => a.toLowerCase())

/**
 * The mailbox or alias address the message was delivered to, as the mailbox
 * spells it: the first own address among Delivered-To / X-Original-To, then
 * among To and Cc; the mailbox's address when none names one of them (a Bcc).
 */
export const recipientOf = (
  mailbox: { readonly address: string; readonly aliases: ReadonlyArray<string> },
  message: Pick<RemoteMessage, "deliveredTo" | "addressedTo">
): string => {
  const own = [mailbox.address, ...mailbox.aliases]
  for (const candidate of [...message.deliveredTo, ...message.addressedTo]) {
    const match = own.find((a) => a.toLowerCase() === candidate.trim().toLowerCase())
    if (match !== undefined) return match
  }
  return mailbox.address
}

export interface OutcomeContext {
  readonly mailbox: { readonly address: string; readonly aliases: ReadonlyArray<string>; readonly personal: boolean }
  readonly folder: FolderKind
  /** When the sync began, epoch ms. */
  readonly syncedAtMs: number
}

/**
 * What a newly seen message makes, in the order the rules are read: a folder
 * that is not inbound, a flag that excludes it, a message sent by the mailbox
 * itself, one received more than 24 hours before the sync, a personal
 * mailbox; otherwise it is emitted.
 */
export const messageOutcome = (message: RemoteMessage, context: OutcomeContext): MessageOutcome => {
  if (!isInboundFolder(context.folder)) return "excluded_folder"
  if (isExcludedByFlags(message.flags)) return "excluded_flag"
  if (message.from !== null && ownAddresses(context.mailbox).includes(message.from.trim().toLowerCase())) return "own_message"
  const received = Date.parse(message.internalDate)
  if (!(received >= context.syncedAtMs - RECENCY_MS)) return "too_old"
  if (context.mailbox.personal) return "personal_mailbox"
  return "emitted"
}

/** `<id@host>` as the id alone; null for an empty or missing header. */
export const normalizeMessageId = (raw: string | null | undefined): string | null => {
  if (raw === null || raw === undefined) return null
  const id = raw.trim().replace(/^<+/, "").replace(/(?<!>)>+$/, "").trim()
  return id === "" ? null : id.slice(0, 998)
}

/**
 * What makes two sightings one message (a move between folders, a copy, the
 * same folder read again after a restart): the Message-ID when it has one;
 * otherwise what a move keeps — INTERNALDATE, size, sender, subject and Date
 * header — to be hashed by the caller.
 */
export const messageIdentity = (message: RemoteMessage): { readonly kind: "message_id" | "fingerprint"; readonly value: string } =>
  message.messageId !== null
    ? { kind: "message_id", value: `mid:${message.messageId}` }
    : {
      kind: "fingerprint",
      value: JSON.stringify([
        message.internalDate,
        message.sizeBytes,
        message.from,
        message.subject,
        message.dateHeader
      ])
    }

/** A node of a message's MIME structure as BODYSTRUCTURE describes it. */
export interface BodyPart {
  /** `type/subtype`, lower case. */
  readonly type: string
  readonly disposition?: string | undefined
  /** A file name from the disposition's `filename` or the type's `name` parameter. */
  readonly filename?: string | undefined
  readonly childNodes?: ReadonlyArray<BodyPart> | undefined
}

/**
 * Whether a message carries attachments: a part marked `attachment`, an
 * attached message, or a non-text part with a file name that is not shown
 * inline (inline images of an HTML body are not attachments).
 */
export const hasAttachments = (root: BodyPart): boolean => {
  const visit = (part: BodyPart, isRoot: boolean): boolean => {
    if (part.childNodes !== undefined && part.childNodes.length > 0 && part.type.startsWith("multipart/")) {
      return part.childNodes.some((child) => visit(child, false))
    }
    const disposition = part.disposition?.toLowerCase()
    if (disposition === "attachment") return true
    if (isRoot) return false
    if (part.type === "message/rfc822") return true
    return part.filename !== undefined && disposition !== "inline" && !part.type.startsWith("text/")
  }
  return visit(root, true)
}

/** Longest wait after failures in a row; an hour, or the interval when that is longer. */
export const MAX_BACKOFF_MS = 60 * 60 * 1000

/**
 * When a failing server is tried again: one interval after the first
 * failure, then twice as long after each further one, up to an hour.
 */
export const backoffMs = (failures: number, intervalMs: number): number => {
  const cap = Math.max(intervalMs, MAX_BACKOFF_MS)
  const exponent = Math.min(Math.max(failures - 1, 0), 30)
  return Math.min(intervalMs * 2 ** exponent, cap)
}

/** The default port of a protection mode. */
export const defaultPort = (tls: "implicit" | "starttls" | "none"): number => (tls === "implicit" ? 993 : 143)

/**
 * An IMAP host as a mailbox may name it: plain-text sign-in only in the
 * sandbox, and — unless the operator allows private hosts — no loopback,
 * private or local host (the adapter checks every address the name resolves
 * to again when it connects).
 */
export const checkImapHost = (
  host: string,
  tls: "implicit" | "starttls" | "none",
  environment: Environment,
  allowPrivate: boolean
): ReadonlyArray<{ readonly field: string; readonly issue: string }> => {
  const issues: Array<{ field: string; issue: string }> = []
  if (tls === "none" && environment === "live") {
    issues.push({ field: "imap.tls", issue: "must be implicit or starttls in the live environment" })
  }
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host
  if (!allowPrivate) {
    if (isLocalName(bare)) issues.push({ field: "imap.host", issue: "must not be a local host name" })
    else if (isIpLiteral(bare) && !isPublicAddress(bare)) {
      issues.push({ field: "imap.host", issue: "must not be a loopback, private, link-local or multicast address" })
    }
  }
  return issues
}
