import { Cause, Duration, Effect, Layer, Schedule } from "effect"
import { FetchHttpClient } from "effect/http"
import { AnafRegistry, FiscalMonitor, type RateLimiter } from "@opsplatform/core"
import { CoreConfig, ServerConfig } from "../../config/Configuration.ts"

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
export const FiscalMonitorJob: Layer.Layer<never, never, FiscalMonitor.FiscalMonitor | ServerConfig> = Layer.effectDiscard(
  Effect.gen(function*() {
    const { fiscalCheckHour: fromHour, fiscalIntervalSec: seconds } = (yield* ServerConfig).jobs
    const monitor = yield* FiscalMonitor.FiscalMonitor
    const pass = monitor.run({ fromHour }).pipe(
      Effect.tap((s) =>
        s.checked + s.not_found === 0 ? Effect.void : Effect.logInfo("fiscal check ran").pipe(
          Effect.annotateLogs({ checked: s.checked, baselines: s.baselines, not_found: s.not_found, events: s.events.length })
        )
      ),
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.logError("fiscal check pass failed", cause)
      )
    )
    yield* Effect.forkScoped(Effect.repeat(pass, Schedule.spaced(Duration.seconds(seconds))))
  })
)
