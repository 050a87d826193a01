import { Context } from "effect"

export interface MailSettingsShape {
  /** Seconds between two passes of the sync (`OPSPLATFORM_MAIL_INTERVAL_SEC`); also the wait after a success. */
  readonly intervalSec: number
  /** How long a claimed mailbox stays one process's before another may take it over. */
  readonly leaseMs: number
  /** Mailboxes one process syncs at once. */
  readonly concurrency: number
  /** New messages read per folder in one sync; the rest wait for the next. */
  readonly fetchLimit: number
  /** Operator switch (`OPSPLATFORM_MAIL_ALLOW_PRIVATE=true`): loopback and private IMAP hosts allowed. */
  readonly allowPrivateHosts: boolean
  /** Mailboxes an organization environment may have (`OPSPLATFORM_MAIL_MAX_MAILBOXES`). */
  readonly maxMailboxes: number
}

export const defaultMailSettings: MailSettingsShape = {
  intervalSec: 60,
  // Longer than a sync can take (every IMAP step has its own timeout), so a lease only runs out when its process stopped.
  leaseMs: 10 * 60 * 1000,
  concurrency: 4,
  fetchLimit: 500,
  allowPrivateHosts: false,
  maxMailboxes: 100
}

/** Mail sync settings; hosts override them from their configuration. */
export const MailSettings = Context.Reference<MailSettingsShape>("@opsplatform/core/mail/MailSettings", {
  defaultValue: () => defaultMailSettings
})
