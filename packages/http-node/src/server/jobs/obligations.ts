import { Cause, Duration, Effect, Layer, Schedule } from "effect"
import { ObligationMonitor } from "@opsplatform/core"

export const DEFAULT_OBLIGATIONS_INTERVAL_SEC = 60

/** Seconds between two passes of the obligation monitor: `OPSPLATFORM_OBLIGATIONS_INTERVAL_SEC`, default 60. */
export const obligationsIntervalSec = (env: NodeJS.ProcessEnv = process.env): number | undefined => {
  const raw = env.OPSPLATFORM_OBLIGATIONS_INTERVAL_SEC
  if (raw === undefined || raw.trim() === "") return DEFAULT_OBLIGATIONS_INTERVAL_SEC
  const seconds = Number(raw)
  return Number.isInteger(seconds) && seconds >= 1 && seconds <= 86_400 ? seconds : undefined
}

/**
 * The obligation monitor inside `serve`: a pass at start, then one every
 * interval. A failed pass is logged and the next one runs as planned; the
 * notices it did not send are still due then.
 */
export const ObligationMonitorJob: Layer.Layer<never, never, ObligationMonitor.ObligationMonitor> = Layer.effectDiscard(
  Effect.gen(function*() {
    const seconds = obligationsIntervalSec()
    if (seconds === undefined) {
      return yield* Effect.die(
        new Error("OPSPLATFORM_OBLIGATIONS_INTERVAL_SEC must be a whole number of seconds from 1 to 86400")
      )
    }
    const monitor = yield* ObligationMonitor.ObligationMonitor
    const pass = monitor.run().pipe(
      Effect.tap((s) =>
        s.notices.length === 0 ? Effect.void : Effect.logInfo("obligation monitor sent notices").pipe(
          Effect.annotateLogs({ reminders: s.reminders, overdue: s.overdue, escalations: s.escalations })
        )
      ),
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.logError("obligation monitor pass failed", cause)
      )
    )
    yield* Effect.forkScoped(Effect.repeat(pass, Schedule.spaced(Duration.seconds(seconds))))
  })
)
