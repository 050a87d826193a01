import { Duration, Effect, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { AnafRegistry, FiscalMonitor, type RateLimiter } from "@opsplatform/core"
import { CoreConfig, ServerConfig } from "../../config/Configuration.ts"
import { periodicJob } from "./periodic.ts"

/**
 * The tax authority the fiscal check asks, as configured: `OPSPLATFORM_ANAF_URL`,
 * the timeout and retries of a call, and the requests a second it allows.
 */
export const FiscalRegistryLive: Layer.Layer<never, never, RateLimiter.RateLimiter | CoreConfig> = Layer.unwrap(
  Effect.map(CoreConfig, ({ anaf }) =>
    AnafRegistry.layer({
      url: anaf.url,
      timeout: Duration.millis(anaf.timeoutMs),
      retries: anaf.retries,
      retryBase: Duration.millis(anaf.retryBaseMs),
      requestsPerSecond: anaf.requestsPerSecond
    }).pipe(Layer.provide(FetchHttpClient.layer)))
)

/**
 * The daily fiscal check inside `serve`: a pass at start, then one every
 * `OPSPLATFORM_FISCAL_INTERVAL_SEC` (default 300), each checking only the
 * organizations whose local time is at or past `OPSPLATFORM_FISCAL_CHECK_HOUR`
 * (0–23, default 6) and only contacts not yet checked on their date, so each
 * is checked once a day from that hour on. A failed pass is logged; what it
 * did not check is still due at the next one.
 */
export const FiscalMonitorJob: Layer.Layer<never, never, FiscalMonitor.FiscalMonitor | ServerConfig> = periodicJob({
  name: "fiscal check",
  metric: "fiscal",
  seconds: Effect.map(ServerConfig, (config) => config.jobs.fiscalIntervalSec),
  pass: Effect.gen(function*() {
    const { fiscalCheckHour: fromHour } = (yield* ServerConfig).jobs
    const s = yield* (yield* FiscalMonitor.FiscalMonitor).run({ fromHour })
    if (s.checked + s.not_found > 0) {
      yield* Effect.logInfo("fiscal check ran").pipe(
        Effect.annotateLogs({ checked: s.checked, baselines: s.baselines, not_found: s.not_found, events: s.events.length })
      )
    }
    return s.checked + s.not_found
  })
})
