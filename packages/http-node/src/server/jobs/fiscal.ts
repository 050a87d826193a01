import { Cause, Config, Duration, Effect, Layer, Schedule, Schema } from "effect"
import { FetchHttpClient } from "effect/http"
import { AnafRegistry, FiscalMonitor, type RateLimiter } from "@opsplatform/core"

const Int = (minimum: number, maximum: number) =>
  Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum, maximum }))

const HttpUrl = Schema.String.check(Schema.isPattern(/^https?:\/\/[^\s/]+/, { message: "must be an http(s) URL" }))

/**
 * The tax authority the fiscal check asks, from the environment:
 * - `OPSPLATFORM_ANAF_URL`: base address of ANAF's web services (default https://webservicesp.anaf.ro);
 * - `OPSPLATFORM_ANAF_TIMEOUT_MS` (default 30000), `OPSPLATFORM_ANAF_RETRIES` (0–10, default 3) and
 *   `OPSPLATFORM_ANAF_RETRY_BASE_MS` (default 1000, doubling each retry);
 * - `OPSPLATFORM_ANAF_REQUESTS_PER_SECOND` (1–100, default 1, ANAF's published limit): for a registry
 *   or a proxy in front of it that allows more.
 * A malformed value stops the process at start with the variable's name.
 */
export const FiscalRegistryLive: Layer.Layer<never, never, RateLimiter.RateLimiter> = Layer.unwrap(
  Effect.gen(function*() {
    const url = yield* Config.schema(HttpUrl, "OPSPLATFORM_ANAF_URL").pipe(Config.withDefault(AnafRegistry.DEFAULT_ANAF_URL))
    const timeoutMs = yield* Config.schema(Int(1, 600_000), "OPSPLATFORM_ANAF_TIMEOUT_MS").pipe(Config.withDefault(30_000))
    const retries = yield* Config.schema(Int(0, 10), "OPSPLATFORM_ANAF_RETRIES").pipe(Config.withDefault(3))
    const retryBaseMs = yield* Config.schema(Int(1, 600_000), "OPSPLATFORM_ANAF_RETRY_BASE_MS").pipe(Config.withDefault(1000))
    const requestsPerSecond = yield* Config.schema(Int(1, 100), "OPSPLATFORM_ANAF_REQUESTS_PER_SECOND").pipe(
      Config.withDefault(AnafRegistry.ANAF_REQUESTS_PER_SECOND)
    )
    return AnafRegistry.layer({
      url,
      timeout: Duration.millis(timeoutMs),
      retries,
      retryBase: Duration.millis(retryBaseMs),
      requestsPerSecond
    }).pipe(Layer.provide(FetchHttpClient.layer))
  }).pipe(Effect.orDie)
)

export const DEFAULT_FISCAL_CHECK_HOUR = 6
export const DEFAULT_FISCAL_INTERVAL_SEC = 300

/**
 * The daily fiscal check inside `serve`: a pass at start, then one every
 * `OPSPLATFORM_FISCAL_INTERVAL_SEC` (default 300), each checking only the
 * organizations whose local time is at or past `OPSPLATFORM_FISCAL_CHECK_HOUR`
 * (0–23, default 6) and only contacts not yet checked on their date, so each
 * is checked once a day from that hour on. A failed pass is logged; what it
 * did not check is still due at the next one.
 */
export const FiscalMonitorJob: Layer.Layer<never, never, FiscalMonitor.FiscalMonitor> = Layer.effectDiscard(
  Effect.gen(function*() {
    const fromHour = yield* Config.schema(Int(0, 23), "OPSPLATFORM_FISCAL_CHECK_HOUR").pipe(
      Config.withDefault(DEFAULT_FISCAL_CHECK_HOUR),
      Effect.orDie
    )
    const seconds = yield* Config.schema(Int(1, 86_400), "OPSPLATFORM_FISCAL_INTERVAL_SEC").pipe(
      Config.withDefault(DEFAULT_FISCAL_INTERVAL_SEC),
      Effect.orDie
    )
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
