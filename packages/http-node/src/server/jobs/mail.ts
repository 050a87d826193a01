import { Cause, Duration, Effect, Layer, Schedule } from "effect"
import { MailSettings, MailSync } from "@opsplatform/core"
import * as fs from "node:fs"
import { ImapMailSource } from "../imapMailSource.ts"

/** The operator's mail configuration could not be used; the message says what to fix. */
export class MailConfigError extends Error {}

const seconds = (env: NodeJS.ProcessEnv, name: string, fallback: number): number => {
  const raw = env[name]
  if (raw === undefined || raw.trim() === "") return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 1 || n > 86_400) {
    throw new MailConfigError(`${name} must be a whole number of seconds from 1 to 86400, got '${raw}'`)
  }
  return n
}

/**
 * Mail sync settings from the environment: `OPSPLATFORM_MAIL_INTERVAL_SEC`
 * (default 60), `OPSPLATFORM_MAIL_ALLOW_PRIVATE=true` for loopback and private
 * IMAP hosts (tests, closed networks), `OPSPLATFORM_MAIL_LEASE_SEC` to shorten
 * the lease (tests).
 */
export const mailSettingsFromEnv = (env: NodeJS.ProcessEnv = process.env): MailSettings.MailSettingsShape => {
  const d = MailSettings.defaultMailSettings
  const allow = env.OPSPLATFORM_MAIL_ALLOW_PRIVATE
  if (allow !== undefined && allow !== "" && allow !== "true" && allow !== "false") {
    throw new MailConfigError(`OPSPLATFORM_MAIL_ALLOW_PRIVATE must be true or false, got '${allow}'`)
  }
  return {
    ...d,
    intervalSec: seconds(env, "OPSPLATFORM_MAIL_INTERVAL_SEC", d.intervalSec),
    leaseMs: seconds(env, "OPSPLATFORM_MAIL_LEASE_SEC", d.leaseMs / 1000) * 1000,
    allowPrivateHosts: allow === "true"
  }
}

/** The settings as a layer, read when it is built. */
export const MailSettingsLive = Layer.unwrap(
  Effect.sync(() => Layer.succeed(MailSettings.MailSettings, mailSettingsFromEnv()))
)

/**
 * The sync over IMAP. `OPSPLATFORM_MAIL_CA_FILE` names a PEM certificate to
 * trust besides the system's, for IMAP servers under a private CA.
 */
export const MailSyncLive = Layer.unwrap(Effect.sync(() => {
  const settings = mailSettingsFromEnv()
  const caFile = process.env.OPSPLATFORM_MAIL_CA_FILE
  const extraCa = caFile === undefined || caFile === "" ? undefined : fs.readFileSync(caFile, "utf8")
  return MailSync.MailSync.layer.pipe(
    Layer.provide(ImapMailSource({ allowPrivate: settings.allowPrivateHosts, extraCa, sessionTimeoutMs: settings.leaseMs / 2 })),
    Layer.provide(Layer.succeed(MailSettings.MailSettings, settings))
  )
}))

/**
 * The mail sync inside `serve`: a pass at start, then one every interval. A
 * failed pass is logged and the next runs as planned; each mailbox's own
 * failures are recorded on it (`last_error`) with its backoff.
 */
export const MailSyncJob = Layer.effectDiscard(
  Effect.gen(function*() {
    const interval = mailSettingsFromEnv().intervalSec
    const sync = yield* MailSync.MailSync
    const pass = sync.run().pipe(
      Effect.tap((s) => {
        const events = s.mailboxes.reduce((n, m) => n + m.events, 0)
        return s.mailboxes.length === 0 ? Effect.void : Effect.logInfo("mail sync pass").pipe(
          Effect.annotateLogs({ mailboxes: s.mailboxes.length, events })
        )
      }),
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.logError("mail sync pass failed", cause)
      )
    )
    yield* Effect.forkScoped(Effect.repeat(pass, Schedule.spaced(Duration.seconds(interval))))
  })
).pipe(Layer.provide(MailSyncLive))
