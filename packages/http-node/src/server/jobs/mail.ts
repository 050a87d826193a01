import { Effect, Layer } from "effect"
import { MailSettings, MailSync } from "@opsplatform/core"
import * as fs from "node:fs"
import { CoreConfig } from "../../config/Configuration.ts"
import { ImapMailSource } from "../imapMailSource.ts"
import { periodicJob } from "./periodic.ts"

/**
 * The sync over IMAP, as configured: `OPSPLATFORM_MAIL_CA_FILE` names a PEM
 * certificate to trust besides the system's, for IMAP servers under a private CA.
 */
export const MailSyncLive = Layer.unwrap(Effect.map(CoreConfig, ({ mail: { caFile, settings } }) => {
  const extraCa = caFile === undefined ? undefined : fs.readFileSync(caFile, "utf8")
  return MailSync.MailSync.layer.pipe(
    Layer.provide(ImapMailSource({ allowPrivate: settings.allowPrivateHosts, extraCa, sessionTimeoutMs: settings.leaseMs / 2 })),
    Layer.provide(Layer.succeed(MailSettings.MailSettings, settings))
  )
}))

/** The settings core's mail area reads, as configured. */
export const MailSettingsLive = Layer.effect(MailSettings.MailSettings, Effect.map(CoreConfig, (config) => config.mail.settings))

/**
 * The mail sync inside `serve`: a pass at start, then one every interval. A
 * failed pass is logged and the next runs as planned; each mailbox's own
 * failures are recorded on it (`last_error`) with its backoff.
 */
export const MailSyncJob = periodicJob({
  name: "mail sync",
  metric: "mail",
  seconds: Effect.map(CoreConfig, (config) => config.mail.settings.intervalSec),
  pass: Effect.gen(function*() {
    const s = yield* (yield* MailSync.MailSync).run()
    const events = s.mailboxes.reduce((n, m) => n + m.events, 0)
    if (s.mailboxes.length > 0) {
      yield* Effect.logInfo("mail sync pass").pipe(Effect.annotateLogs({ mailboxes: s.mailboxes.length, events }))
    }
    return s.mailboxes.length
  })
}).pipe(Layer.provide(MailSyncLive))
