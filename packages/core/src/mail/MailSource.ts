import { Context, type Effect, Schema } from "effect"
import type { ImapTls } from "./model.ts"

/**
 * The port to a mail server: what a sync reads from one mailbox. Headers,
 * flags, dates and sizes only; no body is ever requested. The host provides
 * the adapter (IMAP in `@opsplatform/http-node`).
 */

/** Where to connect and how to sign in; the credential is opened from its seal only for the connection. */
export interface MailConnection {
  readonly host: string
  readonly port: number
  readonly tls: ImapTls
  readonly username: string
  readonly credential: { readonly kind: "password" | "access_token"; readonly secret: string }
}

export interface RemoteFolder {
  readonly path: string
  /** The server's special-use attribute (`\Junk`, `\Sent`, ...), or the adapter's reading of the name; null for none. */
  readonly specialUse: string | null
}

export interface FolderStatus {
  /** UIDVALIDITY, as a decimal string (it is an unsigned 32-bit number). */
  readonly uidValidity: string
  /** The UID the next message will get: every message there now has a lower one. */
  readonly uidNext: number
}

export interface RemoteMessage {
  readonly uid: number
  /** INTERNALDATE, ISO 8601: when the server received the message. */
  readonly internalDate: string
  /** RFC822.SIZE; null when the server reports none. */
  readonly sizeBytes: number | null
  readonly flags: ReadonlyArray<string>
  /** The Message-ID header without its angle brackets, or null. */
  readonly messageId: string | null
  /** The first From address, or null when there is none. */
  readonly from: string | null
  readonly subject: string
  /** The Date header as sent, for telling apart messages without a Message-ID. */
  readonly dateHeader: string | null
  /** Addresses of the Delivered-To and X-Original-To headers, in order. */
  readonly deliveredTo: ReadonlyArray<string>
  /** To and Cc addresses: read only to find which of the mailbox's addresses received it, never stored. */
  readonly addressedTo: ReadonlyArray<string>
  /** From BODYSTRUCTURE (see `hasAttachments`). */
  readonly hasAttachments: boolean
}

/** Which messages of a folder to read: those above a UID, or those received since an instant. */
export type MessageQuery =
  | { readonly _tag: "AfterUid"; readonly uid: number; readonly limit: number }
  | { readonly _tag: "Since"; readonly epochMs: number; readonly limit: number }

export interface FolderMessages {
  /** The UIDVALIDITY the messages were read under. */
  readonly uidValidity: string
  /** In ascending UID order; at most `limit`, the lowest UIDs first for AfterUid, the newest for Since. */
  readonly messages: ReadonlyArray<RemoteMessage>
}

/** The server could not be reached, refused the sign-in, or failed a command; `reason` never holds a secret. */
export class MailSourceError extends Schema.TaggedError<MailSourceError>()("MailSourceError", {
  reason: Schema.String
}) {
  override get message() {
    return this.reason
  }
}

/** One signed-in connection, open for the duration of `MailSource.session`'s callback. */
export interface MailSession {
  /** Every folder that can be opened. */
  readonly folders: Effect.Effect<ReadonlyArray<RemoteFolder>, MailSourceError>
  readonly status: (path: string) => Effect.Effect<FolderStatus, MailSourceError>
  readonly messages: (path: string, query: MessageQuery) => Effect.Effect<FolderMessages, MailSourceError>
}

export class MailSource extends Context.Service<MailSource, {
  /** Connects and signs in, runs `use`, and logs out whatever `use` did. */
  readonly session: <A, E, R>(
    connection: MailConnection,
    use: (session: MailSession) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | MailSourceError, R>
}>()("@opsplatform/core/mail/MailSource") {}
