import { Config, ConfigProvider, Context, Effect, Layer, Option, Redacted } from "effect"
import { ForwardingSettings, MailSettings, type PasswordHashing, type Tenant, WebhookSettings } from "@opsplatform/core"
import type { IpNetwork } from "effect/net"
import * as path from "node:path"
import * as V from "./variables.ts"

/**
 * The configuration of each process kind, built once from the declarations
 * of `variables.ts` through Effect's `Config` (decided: docs/decisions.md, "One
 * configuration service"): `CoreConfig` is what every process reads, since
 * every one builds core (`serve`, `worker` and the CLI's commands alike);
 * `ServerConfig` is what `serve` reads besides. Each is a service provided as
 * a layer: from the environment in a process, from the values a test gives in
 * a test (`layerTest`). A malformed value stops the process at start with a
 * message naming the variable (and never a secret's value).
 */

/** Which database a process uses (`DATABASE_URL`, else the embedded one in `OPSPLATFORM_DATA_DIR`). */
export type DatabaseChoice =
  | {
    readonly _tag: "Postgres"
    readonly url: string
    readonly maxConnections?: number | undefined
    /** Authentication's credential cache (on unless false): see `credentialCache`. */
    readonly credentialCache?: boolean | undefined
  }
  | { readonly _tag: "Embedded"; readonly dataDir: string }
  | { readonly _tag: "EmbeddedFromDump"; readonly dump: Blob }
  | { readonly _tag: "EmbeddedMemory" }

/** Where Stripe is and which keys to use (docs/decisions.md, "Usage metering"). */
export interface StripeSettings {
  /** `https://api.stripe.com` in production; a fake on loopback in tests. */
  readonly apiBase: URL
  /** The secret key of each environment that has one: sandbox a test-mode key, live a live-mode key. */
  readonly keys: Partial<Record<Tenant.Environment, Redacted.Redacted<string>>>
  /** One call's whole exchange. */
  readonly timeoutMs: number
  /** Named in the SDK's user agent (`appInfo`). */
  readonly appName: string
}

/** A variable's value cannot be used; the message says which and why. */
export class ConfigurationError extends Error {}

export interface CoreSettings {
  readonly database: DatabaseChoice
  /** The operator key's text, parsed where it is used (`resolveOperatorKey`). */
  readonly secretKey: Option.Option<Redacted.Redacted<string>>
  readonly log: { readonly level: string; readonly format: string }
  /** The process's one pool of password and PIN hashing. */
  readonly hashing: PasswordHashing.HashingBudgetShape
  /** OAuth sign-ins and stored authorization requests per minute per client network. */
  readonly oauthPerNetworkPerMinute: number
  readonly webhooks: { readonly settings: WebhookSettings.WebhookSettingsShape; readonly caFile: string | undefined }
  readonly mail: { readonly settings: MailSettings.MailSettingsShape; readonly caFile: string | undefined }
  readonly metering: {
    readonly stripe: StripeSettings
    readonly forwarding: ForwardingSettings.ForwardingSettings
    readonly recording: ForwardingSettings.RecordingSettings
  }
  readonly anaf: {
    readonly url: string
    readonly timeoutMs: number
    readonly retries: number
    readonly retryBaseMs: number
    readonly requestsPerSecond: number
  }
  readonly routes: {
    readonly heavyPerMinute: number
    readonly couriers: Option.Option<typeof V.Couriers.Type>
    readonly courierTimeoutMs: number
  }
  readonly observability: ObservabilitySettings
}

/** What `serve` and `worker` show operators (docs/decisions.md, "Metrics and traces"). */
export interface ObservabilitySettings {
  /** The metrics listener (`OPSPLATFORM_METRICS_PORT`, `OPSPLATFORM_METRICS_HOST`); none: no metrics kept. */
  readonly metrics: { readonly port: number; readonly host: string } | undefined
  /** Where spans go over OTLP/HTTP; none: no spans recorded beyond Effect's in-process ones. */
  readonly traces: {
    readonly url: string
    readonly headers: Redacted.Redacted<Readonly<Record<string, string>>>
    readonly serviceName: string
  } | undefined
}

export interface ServerSettings {
  readonly port: number
  readonly publicUrl: string | undefined
  /** Proxies whose X-Forwarded-For / -Host / -Proto are believed (`OPSPLATFORM_TRUSTED_PROXIES`). */
  readonly trustedProxies: ReadonlyArray<IpNetwork.IpNetwork>
  readonly jobs: {
    readonly obligationsIntervalSec: number
    readonly pulseIntervalSec: number
    readonly fiscalCheckHour: number
    readonly fiscalIntervalSec: number
  }
}

/** Which database: `DATABASE_URL` means PostgreSQL, otherwise PGlite in the data directory. */
export const databaseConfig: Config.Config<DatabaseChoice> = Config.all({
  url: V.DATABASE_URL.config,
  pool: V.DATABASE_POOL_SIZE.config,
  cache: V.OPSPLATFORM_CREDENTIAL_CACHE.config,
  dataDir: V.OPSPLATFORM_DATA_DIR.config
}).pipe(Config.map(({ cache, dataDir, pool, url }): DatabaseChoice =>
  Option.match(url, {
    onSome: (url) => ({ _tag: "Postgres", url, maxConnections: pool, credentialCache: cache === "on" }),
    onNone: () => ({ _tag: "Embedded", dataDir: path.resolve(dataDir) })
  })
))

export const logConfig = Config.all({ level: V.OPSPLATFORM_LOG_LEVEL.config, format: V.OPSPLATFORM_LOG_FORMAT.config })

const webhooksConfig = Config.all({
  schedule: V.OPSPLATFORM_WEBHOOKS_SCHEDULE_MS.config,
  timeoutMs: V.OPSPLATFORM_WEBHOOKS_TIMEOUT_MS.config,
  leaseMs: V.OPSPLATFORM_WEBHOOKS_LEASE_MS.config,
  batchSize: V.OPSPLATFORM_WEBHOOKS_BATCH_SIZE.config,
  concurrency: V.OPSPLATFORM_WEBHOOKS_CONCURRENCY.config,
  pollIntervalMs: V.OPSPLATFORM_WEBHOOKS_POLL_MS.config,
  maxSubscriptions: V.OPSPLATFORM_WEBHOOKS_MAX_SUBSCRIPTIONS.config,
  testsPerMinute: V.OPSPLATFORM_WEBHOOKS_TESTS_PER_MIN.config,
  redeliveriesPerMinute: V.OPSPLATFORM_WEBHOOKS_REDELIVERIES_PER_MIN.config,
  allowPrivateDestinations: V.OPSPLATFORM_WEBHOOKS_ALLOW_PRIVATE.config,
  caFile: V.OPSPLATFORM_WEBHOOKS_CA_FILE.config
}).pipe(Config.map(({ caFile, leaseMs, schedule, ...read }) => {
  const d = WebhookSettings.defaultWebhookSettings
  return {
    settings: {
      ...d,
      ...read,
      schedule: Option.match(schedule, { onNone: () => d.schedule, onSome: (s) => s.split(",").map((n) => Number(n.trim())) }),
      leaseMs: Option.getOrElse(leaseMs, () => Math.max(d.leaseMs, read.timeoutMs + 15_000))
    },
    caFile: Option.getOrUndefined(caFile)
  }
}))

const mailConfig = Config.all({
  intervalSec: V.OPSPLATFORM_MAIL_INTERVAL_SEC.config,
  leaseSec: V.OPSPLATFORM_MAIL_LEASE_SEC.config,
  allowPrivateHosts: V.OPSPLATFORM_MAIL_ALLOW_PRIVATE.config,
  maxMailboxes: V.OPSPLATFORM_MAIL_MAX_MAILBOXES.config,
  caFile: V.OPSPLATFORM_MAIL_CA_FILE.config
}).pipe(Config.map(({ allowPrivateHosts, caFile, intervalSec, leaseSec, maxMailboxes }) => ({
  settings: { ...MailSettings.defaultMailSettings, intervalSec, leaseMs: leaseSec * 1000, allowPrivateHosts, maxMailboxes },
  caFile: Option.getOrUndefined(caFile)
})))

const meteringConfig = Config.all({
  apiBase: V.OPSPLATFORM_STRIPE_API_BASE.config,
  testKey: V.OPSPLATFORM_STRIPE_TEST_KEY.config,
  liveKey: V.OPSPLATFORM_STRIPE_LIVE_KEY.config,
  timeoutMs: V.OPSPLATFORM_STRIPE_TIMEOUT_MS.config,
  leaseMs: V.OPSPLATFORM_METERING_LEASE_MS.config,
  streams: V.OPSPLATFORM_METERING_STREAMS.config,
  perStream: V.OPSPLATFORM_METERING_PER_STREAM.config,
  pollIntervalMs: V.OPSPLATFORM_METERING_POLL_MS.config,
  retryBaseMs: V.OPSPLATFORM_METERING_RETRY_BASE_MS.config,
  retryMaxMs: V.OPSPLATFORM_METERING_RETRY_MAX_MS.config,
  maxGroup: V.OPSPLATFORM_METERING_GROUP_MAX.config,
  groupsInFlight: V.OPSPLATFORM_METERING_GROUPS_IN_FLIGHT.config
}).pipe(Config.map((m) => {
  const d = ForwardingSettings.defaultForwardingSettings
  const keys: StripeSettings["keys"] = {
    ...Option.match(m.testKey, { onNone: () => ({}), onSome: (sandbox) => ({ sandbox }) }),
    ...Option.match(m.liveKey, { onNone: () => ({}), onSome: (live) => ({ live }) })
  }
  return {
    stripe: { apiBase: new URL(m.apiBase), keys, timeoutMs: m.timeoutMs, appName: "opsplatform" },
    forwarding: {
      // A call may take the timeout twice (the SDK retries a closed connection once): the lease outlasts both.
      leaseMs: Option.getOrElse(m.leaseMs, () => Math.max(d.leaseMs, 2 * m.timeoutMs + 5_000)),
      streams: m.streams,
      perStream: m.perStream,
      pollIntervalMs: m.pollIntervalMs,
      retry: { baseMs: m.retryBaseMs, maxMs: m.retryMaxMs }
    },
    recording: { maxGroup: m.maxGroup, groupsInFlight: m.groupsInFlight }
  }
}))

/** `key=value,key=value` (values percent-decoded, as the OpenTelemetry specification writes them). */
const otlpHeaders = (text: string): Record<string, string> =>
  Object.fromEntries(text.split(",").map((pair) => {
    const at = pair.indexOf("=")
    return [pair.slice(0, at).trim(), decodeURIComponent(pair.slice(at + 1).trim())]
  }))

const observabilityConfig: Config.Config<ObservabilitySettings> = Config.all({
  metricsPort: V.OPSPLATFORM_METRICS_PORT.config,
  metricsHost: V.OPSPLATFORM_METRICS_HOST.config,
  endpoint: V.OTEL_EXPORTER_OTLP_ENDPOINT.config,
  tracesEndpoint: V.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT.config,
  headers: V.OTEL_EXPORTER_OTLP_HEADERS.config,
  exporter: V.OTEL_TRACES_EXPORTER.config,
  disabled: V.OTEL_SDK_DISABLED.config,
  serviceName: V.OTEL_SERVICE_NAME.config
}).pipe(Config.map((o): ObservabilitySettings => {
  // The specification: the signal's own endpoint as it is, else the base endpoint with /v1/traces appended.
  const url = Option.orElse(
    o.tracesEndpoint,
    () => Option.map(o.endpoint, (base) => `${base}${base.endsWith("/") ? "" : "/"}v1/traces`)
  )
  return {
    metrics: Option.match(o.metricsPort, { onNone: () => undefined, onSome: (port) => ({ port, host: o.metricsHost }) }),
    traces: o.disabled || o.exporter === "none" || Option.isNone(url) ? undefined : {
      url: url.value,
      headers: Redacted.make(Option.match(o.headers, { onNone: () => ({}), onSome: (h) => otlpHeaders(Redacted.value(h)) })),
      serviceName: o.serviceName
    }
  }
}))

export const coreConfig: Config.Config<CoreSettings> = Config.all({
  database: databaseConfig,
  secretKey: V.OPSPLATFORM_SECRET_KEY.config,
  log: logConfig,
  hashing: Config.all({ concurrency: V.OPSPLATFORM_HASH_CONCURRENCY.config, queueLimit: V.OPSPLATFORM_HASH_QUEUE.config }),
  oauthPerNetworkPerMinute: V.OPSPLATFORM_OAUTH_PER_NETWORK_PER_MIN.config,
  webhooks: webhooksConfig,
  mail: mailConfig,
  metering: meteringConfig,
  anaf: Config.all({
    url: V.OPSPLATFORM_ANAF_URL.config,
    timeoutMs: V.OPSPLATFORM_ANAF_TIMEOUT_MS.config,
    retries: V.OPSPLATFORM_ANAF_RETRIES.config,
    retryBaseMs: V.OPSPLATFORM_ANAF_RETRY_BASE_MS.config,
    requestsPerSecond: V.OPSPLATFORM_ANAF_REQUESTS_PER_SECOND.config
  }),
  routes: Config.all({
    heavyPerMinute: V.OPSPLATFORM_HEAVY_RATE_PER_MIN.config,
    couriers: V.OPSPLATFORM_COURIERS.config,
    courierTimeoutMs: V.OPSPLATFORM_COURIER_TIMEOUT_MS.config
  }),
  observability: observabilityConfig
})

export const serverConfig: Config.Config<ServerSettings> = Config.all({
  port: V.PORT.config,
  publicUrl: Config.map(V.OPSPLATFORM_PUBLIC_URL.config, Option.getOrUndefined),
  trustedProxies: Config.map(V.OPSPLATFORM_TRUSTED_PROXIES.config, Option.getOrElse(() => [])),
  jobs: Config.all({
    obligationsIntervalSec: V.OPSPLATFORM_OBLIGATIONS_INTERVAL_SEC.config,
    pulseIntervalSec: V.OPSPLATFORM_PULSE_INTERVAL_SEC.config,
    fiscalCheckHour: V.OPSPLATFORM_FISCAL_CHECK_HOUR.config,
    fiscalIntervalSec: V.OPSPLATFORM_FISCAL_INTERVAL_SEC.config
  })
})

/** A configuration read, its failure a defect whose message names the variable. */
export const load = <A>(config: Config.Config<A>): Effect.Effect<A> =>
  Effect.catch(config as Effect.Effect<A, Config.ConfigError>, (e) =>
    Effect.die(new ConfigurationError(e.cause instanceof ConfigProvider.SourceError ? e.cause.message : e.message)))

/** What every process kind reads: the settings core is built with. */
export class CoreConfig extends Context.Service<CoreConfig, CoreSettings>()("@opsplatform/http-node/CoreConfig") {
  /** From the configuration provider: the environment in a process. */
  static readonly layer: Layer.Layer<CoreConfig> = Layer.effect(CoreConfig, load(coreConfig))
}

/** What `serve` reads besides core's: its port, its public URL and the intervals of its jobs. */
export class ServerConfig extends Context.Service<ServerConfig, ServerSettings>()("@opsplatform/http-node/ServerConfig") {
  static readonly layer: Layer.Layer<ServerConfig> = Layer.effect(ServerConfig, load(serverConfig))
}

/**
 * A test's configuration: the services built from the values given (as the
 * variables' texts) and the defaults for the rest, and those values as the
 * configuration provider, so that a layer reading its own configuration reads
 * the same. The process's environment is not read: what a test sets stays its own.
 */
export const layerTest = (values: Readonly<Record<string, string>> = {}): Layer.Layer<CoreConfig | ServerConfig> =>
  Layer.merge(CoreConfig.layer, ServerConfig.layer).pipe(
    Layer.provideMerge(ConfigProvider.layer(ConfigProvider.fromUnknown(values)))
  )

/**
 * Reads settings from a record of variables at once (a host's own environment,
 * a test's values): throws the ConfigurationError that names a malformed one.
 */
export const readFrom = <A>(config: Config.Config<A>, env: Readonly<Record<string, string | undefined>>): A =>
  Effect.runSync(load(config).pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: env as Record<string, string> })))))

/** The database a host's environment names (`process.env` unless given). */
export const databaseChoiceFromEnv = (env: Readonly<Record<string, string | undefined>> = process.env): DatabaseChoice =>
  readFrom(databaseConfig, env)

export const coreSettingsFrom = (env: Readonly<Record<string, string | undefined>>): CoreSettings => readFrom(coreConfig, env)
export const serverSettingsFrom = (env: Readonly<Record<string, string | undefined>>): ServerSettings =>
  readFrom(serverConfig, env)
