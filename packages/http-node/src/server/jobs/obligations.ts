import { Effect, type Layer } from "effect"
import { ObligationMonitor } from "@opsplatform/core"
import { ServerConfig } from "../../config/Configuration.ts"
import { periodicJob } from "./periodic.ts"

/**
 * The obligation monitor inside `serve`: a pass at start, then one every
 * `OPSPLATFORM_OBLIGATIONS_INTERVAL_SEC`. A failed pass is logged and the next one runs as planned; the
 * notices it did not send are still due then.
 */
export const ObligationMonitorJob: Layer.Layer<never, never, ObligationMonitor.ObligationMonitor | ServerConfig> = periodicJob({
  name: "obligation monitor",
  metric: "obligations",
  seconds: Effect.map(ServerConfig, (config) => config.jobs.obligationsIntervalSec),
  pass: Effect.flatMap(ObligationMonitor.ObligationMonitor, (monitor) =>
    monitor.run().pipe(
      Effect.tap((s) =>
        s.notices.length === 0 ? Effect.void : Effect.logInfo("obligation monitor sent notices").pipe(
          Effect.annotateLogs({ reminders: s.reminders, overdue: s.overdue, escalations: s.escalations })
        )
      ),
      Effect.map((s) => s.notices.length)
    ))
})
