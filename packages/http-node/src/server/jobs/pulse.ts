import { Effect } from "effect"
import { PulseRollups } from "@opsplatform/core"
import { intervalSecFromEnv, periodicJob } from "./periodic.ts"

export const DEFAULT_PULSE_INTERVAL_SEC = 10

/** Seconds between two passes of the pulse job: `OPSPLATFORM_PULSE_INTERVAL_SEC`, default 10. */
export const pulseIntervalSec = (env: NodeJS.ProcessEnv = process.env): number | undefined =>
  intervalSecFromEnv("OPSPLATFORM_PULSE_INTERVAL_SEC", DEFAULT_PULSE_INTERVAL_SEC, env)

/**
 * The pulse job inside `serve`: folds the money figures' deltas into their
 * days. The deltas a failed pass leaves are folded by the next one, and the
 * figures stay exact meanwhile.
 */
export const PulseRollupJob = periodicJob({
  name: "pulse job",
  interval: { variable: "OPSPLATFORM_PULSE_INTERVAL_SEC", seconds: pulseIntervalSec },
  pass: Effect.flatMap(PulseRollups.PulseRollups, (rollups) => Effect.asVoid(rollups.compact))
})
