import { Effect } from "effect"
import { PulseRollups } from "@opsplatform/core"
import { ServerConfig } from "../../config/Configuration.ts"
import { periodicJob } from "./periodic.ts"

/**
 * The pulse job inside `serve`, every `OPSPLATFORM_PULSE_INTERVAL_SEC`: folds the money figures' deltas into their
 * days. The deltas a failed pass leaves are folded by the next one, and the
 * figures stay exact meanwhile.
 */
export const PulseRollupJob = periodicJob({
  name: "pulse job",
  metric: "pulse",
  seconds: Effect.map(ServerConfig, (config) => config.jobs.pulseIntervalSec),
  pass: Effect.flatMap(PulseRollups.PulseRollups, (rollups) => Effect.map(rollups.compact, (s) => s.folded))
})
