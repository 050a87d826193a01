import { Layer } from "effect"
import type { ServerConfig } from "../config/Configuration.ts"
import type { CoreLive } from "./app.ts"
import { FiscalMonitorJob } from "./jobs/fiscal.ts"
import { ObligationMonitorJob } from "./jobs/obligations.ts"
import { MailSyncJob } from "./jobs/mail.ts"
import { PulseRollupJob } from "./jobs/pulse.ts"
import { usageForwarderJob } from "./metering.ts"
import { webhookWorkerJob } from "./webhooks.ts"

/**
 * Work that runs inside `opsplatform serve` beside the HTTP server (webhook
 * delivery worker, obligation monitor, ...). Each is a layer that forks its
 * loop in the server's scope, so SIGTERM stops it with the server. Add new
 * jobs to this list.
 */
export const backgroundJobs: ReadonlyArray<Layer.Layer<never, never, CoreLive | ServerConfig>> = [
  ObligationMonitorJob,
  webhookWorkerJob,
  FiscalMonitorJob,
  MailSyncJob,
  PulseRollupJob,
  usageForwarderJob
]

export const BackgroundJobs = (enabled: boolean): Layer.Layer<never, never, CoreLive | ServerConfig> =>
  enabled && backgroundJobs.length > 0
    ? Layer.mergeAll(...(backgroundJobs as [Layer.Layer<never, never, CoreLive | ServerConfig>]))
    : Layer.empty
