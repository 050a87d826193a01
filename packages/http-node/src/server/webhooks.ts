import { PgClient } from "@effect/sql-pg"
import { Cause, Effect, Layer, Metric, Option, Queue, Redacted } from "effect"
import type { Aead, SecureRandom } from "effect/crypto"
import {
  CoreMetrics,
  DeliverySignal,
  DeliveryWorker,
  DeliveryRepo,
  SecretBox,
  WebhookSettings,
  type WebhookTransport
} from "@opsplatform/core"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { CoreConfig } from "../config/Configuration.ts"
import type { DatabaseChoice } from "./database.ts"
import { NodeWebhookTransport } from "./webhookTransport.ts"

/** The operator's configuration could not be used; the message says what to fix. */
export class WebhookConfigError extends Error {}

const KEY_HELP = "32 bytes as base64 (e.g. `openssl rand -base64 32`) or as 64 hex digits"

/** `OPSPLATFORM_SECRET_KEY` (or the key file's content) as 32 bytes. */
export const parseOperatorKey = (text: string, source: string): Uint8Array => {
  const value = text.trim()
  const bytes = /^[0-9a-f]{64}$/i.test(value)
    ? Buffer.from(value, "hex")
    : /^[A-Za-z0-9+/_-]+={0,2}$/.test(value)
    ? Buffer.from(value.replace(/-/g, "+").replace(/_/g, "/"), "base64")
    : undefined
  if (bytes === undefined || bytes.length !== 32) throw new WebhookConfigError(`${source} must be ${KEY_HELP}`)
  return new Uint8Array(bytes)
}

/** The key file of an embedded data directory: created on first start, readable by its owner only. */
const keyFile = (dataDir: string): Uint8Array => {
  const file = path.join(dataDir, "secret.key")
  fs.mkdirSync(dataDir, { recursive: true })
  try {
    fs.writeFileSync(file, randomBytes(32).toString("base64") + "\n", { flag: "wx", mode: 0o600 })
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
  }
  const mode = fs.statSync(file).mode
  if (process.platform !== "win32" && (mode & 0o077) !== 0) {
    throw new WebhookConfigError(
      `${file} is readable by other users (mode ${(mode & 0o777).toString(8)}); run \`chmod 600 ${file}\``
    )
  }
  return parseOperatorKey(fs.readFileSync(file, "utf8"), file)
}

export const MISSING_KEY_MESSAGE = "OPSPLATFORM_SECRET_KEY is not set. With PostgreSQL, webhook signing secrets are " +
  `encrypted under this operator key: set it to ${KEY_HELP}, the same on every process sharing the database.`

/**
 * Where the operator key comes from: `OPSPLATFORM_SECRET_KEY` when set;
 * otherwise, on the embedded database, a key file in the data directory
 * (a throwaway key for in-memory databases). On PostgreSQL without the
 * variable there is no key: `serve` and `worker` refuse to start.
 */
export const resolveOperatorKey = (
  choice: DatabaseChoice,
  secretKey: Option.Option<Redacted.Redacted<string>>
): Option.Option<Uint8Array> => {
  if (Option.isSome(secretKey)) return Option.some(parseOperatorKey(Redacted.value(secretKey.value), "OPSPLATFORM_SECRET_KEY"))
  switch (choice._tag) {
    case "Embedded":
      return Option.some(keyFile(choice.dataDir))
    case "EmbeddedFromDump":
    case "EmbeddedMemory":
      return Option.some(new Uint8Array(randomBytes(32)))
    case "Postgres":
      return Option.none()
  }
}

/**
 * What webhooks need from the host: the settings, the operator key's
 * SecretBox and the Node transport. Without a key, sealing and opening
 * secrets fails with MISSING_KEY_MESSAGE (the CLI refuses to start before
 * that can happen).
 */
export const webhooksInfrastructure = (
  choice: DatabaseChoice
): Layer.Layer<
  SecretBox.SecretBox | WebhookTransport.WebhookTransport,
  never,
  Aead.Aead | SecureRandom.SecureRandom | CoreConfig
> =>
  Layer.unwrap(Effect.map(CoreConfig, ({ secretKey, webhooks }) => {
    const box = Option.match(resolveOperatorKey(choice, secretKey), {
      onNone: () => SecretBox.SecretBox.layerUnavailable(MISSING_KEY_MESSAGE),
      onSome: (bytes) => SecretBox.SecretBox.layer(bytes)
    })
    const extraCa = webhooks.caFile === undefined ? undefined : fs.readFileSync(webhooks.caFile, "utf8")
    return Layer.mergeAll(box, NodeWebhookTransport({ extraCa })).pipe(
      Layer.provideMerge(Layer.succeed(WebhookSettings.WebhookSettings, webhooks.settings))
    )
  }))

const listening = Metric.withAttributes(CoreMetrics.listenConnected, { channel: "webhooks" })

/**
 * On a PostgreSQL server, wakes this process's workers when any process
 * commits deliveries (LISTEN on the outbox's channel). The embedded database
 * (reached by host and port, never by URL) is one process, where the
 * in-process signal already does it.
 */
const crossProcessWakeups = Effect.gen(function*() {
  const pg = yield* PgClient.PgClient
  if (pg.config.url === undefined) return
  const signal = yield* DeliverySignal.DeliverySignal
  const notifications = yield* pg.listen(DeliveryRepo.DELIVERY_CHANNEL)
  yield* Metric.update(listening, 1)
  yield* Effect.forever(Effect.andThen(Queue.take(notifications), signal.notify))
}).pipe(
  Effect.onExit(() => Metric.update(listening, 0)),
  Effect.catchCause((cause) =>
    Cause.hasInterruptsOnly(cause)
      ? Effect.void
      : Effect.logWarning("webhook wake-ups stopped; workers fall back to polling", Cause.squash(cause))
  ),
  Effect.scoped
)

/**
 * The worker as a background job: runs until the enclosing scope closes
 * (SIGTERM), then lets the attempts in flight finish and be recorded.
 */
export const webhookWorkerJob = Layer.effectDiscard(Effect.gen(function*() {
    const worker = yield* DeliveryWorker.DeliveryWorker
    yield* Effect.forkScoped(crossProcessWakeups)
    yield* Effect.forkScoped(worker.run)
    yield* Effect.logInfo("webhook worker started")
  })).pipe(Layer.provide(DeliveryWorker.DeliveryWorker.layer))
