import { Config, Effect, Layer, Option, Redacted } from "effect"
import { ForwardingSettings, type Tenant, UsageForwarder } from "@opsplatform/core"
import { keyModes, StripePaymentProcessor, type StripeSettings } from "./stripe.ts"

/** The operator's metering configuration could not be used; the message names the variable and never a key. */
export class MeteringConfigError extends Error {}

const positiveInt = (name: string, fallback: number) =>
  Config.option(Config.String(name)).pipe(
    Config.map(Option.match({
      onNone: () => fallback,
      onSome: (raw) => {
        const n = Number(raw)
        if (raw.trim() === "" || !Number.isInteger(n) || n < 1) {
          throw new MeteringConfigError(`${name} must be a positive integer, got '${raw}'`)
        }
        return n
      }
    }))
  )

const apiBase = Config.option(Config.String("OPSPLATFORM_STRIPE_API_BASE")).pipe(
  Config.map(Option.match({
    onNone: () => new URL("https://api.stripe.com"),
    onSome: (raw) => {
      let url: URL
      try {
        url = new URL(raw)
      } catch {
        throw new MeteringConfigError(`OPSPLATFORM_STRIPE_API_BASE must be a URL such as https://api.stripe.com, got '${raw}'`)
      }
      // The SDK takes a host, a port and a protocol: a path or a query would be silently dropped.
      if ((url.protocol !== "https:" && url.protocol !== "http:") || (url.pathname !== "/" && url.pathname !== "") || url.search !== "") {
        throw new MeteringConfigError(
          `OPSPLATFORM_STRIPE_API_BASE must be http(s)://host[:port] with no path or query, got '${raw}'`
        )
      }
      return url
    }
  }))
)

const key = (environment: Tenant.Environment) => {
  const { prefixes, variable } = keyModes[environment]
  return Config.option(Config.Redacted(variable)).pipe(
    Config.map(Option.filter((k) => Redacted.value(k) !== "")),
    Config.map(Option.map((k) => {
      if (!prefixes.some((p) => Redacted.value(k).startsWith(p))) {
        throw new MeteringConfigError(`${variable} must be a Stripe secret key starting with ${prefixes.join(" or ")}`)
      }
      return k
    }))
  )
}

/**
 * Metering settings from the environment: `OPSPLATFORM_STRIPE_API_BASE`
 * (default https://api.stripe.com), `OPSPLATFORM_STRIPE_TEST_KEY` (the
 * sandbox's usage), `OPSPLATFORM_STRIPE_LIVE_KEY` (live usage),
 * `OPSPLATFORM_STRIPE_TIMEOUT_MS`, and the forwarder's
 * `OPSPLATFORM_METERING_{LEASE_MS,STREAMS,PER_STREAM,POLL_MS,RETRY_BASE_MS,RETRY_MAX_MS}`.
 * An environment without a key keeps its usage `pending`. A malformed value
 * stops the process at start, naming the variable.
 */
export const meteringSettings = Effect.gen(function*() {
  const d = ForwardingSettings.defaultForwardingSettings
  const timeoutMs = yield* positiveInt("OPSPLATFORM_STRIPE_TIMEOUT_MS", 15_000)
  const keys: Partial<Record<Tenant.Environment, Redacted.Redacted<string>>> = {}
  for (const environment of ["sandbox", "live"] as const) {
    const found = yield* key(environment)
    if (Option.isSome(found)) keys[environment] = found.value
  }
  const stripe: StripeSettings = { apiBase: yield* apiBase, keys, timeoutMs, appName: "opsplatform" }
  const forwarding: ForwardingSettings.ForwardingSettings = {
    // A call may take the timeout twice (the SDK retries a closed connection once): the lease outlasts both.
    leaseMs: yield* positiveInt("OPSPLATFORM_METERING_LEASE_MS", Math.max(d.leaseMs, 2 * timeoutMs + 5_000)),
    streams: yield* positiveInt("OPSPLATFORM_METERING_STREAMS", d.streams),
    perStream: yield* positiveInt("OPSPLATFORM_METERING_PER_STREAM", d.perStream),
    pollIntervalMs: yield* positiveInt("OPSPLATFORM_METERING_POLL_MS", d.pollIntervalMs),
    retry: {
      baseMs: yield* positiveInt("OPSPLATFORM_METERING_RETRY_BASE_MS", d.retry.baseMs),
      maxMs: yield* positiveInt("OPSPLATFORM_METERING_RETRY_MAX_MS", d.retry.maxMs)
    }
  }
  return { stripe, forwarding }
}).pipe(Effect.orDie)

/**
 * How the SQL store writes usage reports, from `OPSPLATFORM_METERING_GROUP_MAX`
 * (reports in one statement at most; 1 writes each by itself) and
 * `OPSPLATFORM_METERING_GROUPS_IN_FLIGHT` (such statements at once).
 */
export const RecordingSettingsLive = Layer.effect(
  ForwardingSettings.RecordingSettings,
  Effect.gen(function*() {
    const d = ForwardingSettings.defaultRecordingSettings
    return {
      maxGroup: yield* positiveInt("OPSPLATFORM_METERING_GROUP_MAX", d.maxGroup),
      groupsInFlight: yield* positiveInt("OPSPLATFORM_METERING_GROUPS_IN_FLIGHT", d.groupsInFlight)
    }
  }).pipe(Effect.orDie)
)

/** The forwarder with Stripe as its processor, configured from the environment. */
export const UsageForwarderLive = Layer.unwrap(Effect.map(meteringSettings, ({ forwarding, stripe }) =>
  UsageForwarder.UsageForwarder.layer.pipe(
    Layer.provide(StripePaymentProcessor(stripe)),
    Layer.provide(Layer.succeed(ForwardingSettings.ForwardingSettings, forwarding))
  )))

/**
 * The forwarder as a background job (inside `serve`, and in `opsplatform
 * worker`): runs until the enclosing scope closes (SIGTERM), then lets each
 * stream finish the call under way.
 */
export const usageForwarderJob = Layer.effectDiscard(Effect.gen(function*() {
  const forwarder = yield* UsageForwarder.UsageForwarder
  const { stripe } = yield* meteringSettings
  const environments = Object.keys(stripe.keys)
  yield* Effect.forkScoped(forwarder.run)
  yield* Effect.logInfo("usage forwarder started").pipe(Effect.annotateLogs({ environments, stripe: stripe.apiBase.origin }))
  if (environments.length === 0) {
    yield* Effect.logWarning(
      "no Stripe key is configured (OPSPLATFORM_STRIPE_TEST_KEY, OPSPLATFORM_STRIPE_LIVE_KEY): usage records wait as pending"
    )
  }
})).pipe(Layer.provide(UsageForwarderLive))
