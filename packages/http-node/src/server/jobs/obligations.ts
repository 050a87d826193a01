import { Effect, type Layer } from "effect"
import { ObligationMonitor } from "@opsplatform/core"
import { intervalSecFromEnv, periodicJob } from "./periodic.ts"

export const DEFAULT_OBLIGATIONS_INTERVAL_SEC = 60

/** Seconds between two passes of the obligation monitor: `OPSPLATFORM_OBLIGATIONS_INTERVAL_SEC`, default 60. */
export const obligationsIntervalSec = (env: NodeJS.ProcessEnv = process.env): number | undefined =>
  intervalSecFromEnv("OPSPLATFORM_OBLIGATIONS_INTERVAL_SEC", DEFAULT_OBLIGATIONS_INTERVAL_SEC, env)

/**
 * The obligation monitor inside `serve`: a pass at start, then one every
 * interval. A failed pass is logged and the next one runs as planned; the
 * notices it did not send are still due then.
 */
export const ObligationMonitorJob: Layer.Layer<never, never, ObligationMonitor.ObligationMonitor> = periodicJob({
  name: "obligation monitor",
  interval: { variable: "OPSPLATFORM_OBLIGATIONS_INTERVAL_SEC", seconds: obligationsIntervalSec },
  pass: Effect.flatMap(ObligationMonitor.ObligationMonitor, (monitor) =>
    monitor.run().pipe(
      Effect.tap((s) =>
        s.notices.length === 0 ? Effect.void : Effect.logInfo("obligation monitor sent notices").pipe(
          Effect.annotateLogs({ reminders: s.reminders, overdue: s.overdue, escalations: s.escalations })
        )
      ),
      Effect.asVoid
    ))
})
