import { Config, ConfigProvider, Option, Redacted, Result, Schema, SchemaTransformation } from "effect"
import { IpNetwork, NetAddress } from "effect/net"
import { AnafRegistry, MailSettings, PasswordHashing, WebhookSettings } from "@opsplatform/core"

/**
 * Every environment variable the project reads, declared once: its name, the
 * schema its text must meet, what its absence means, which process kinds read
 * it and what it does (decided: docs/decisions.md, "One configuration
 * service"). `Configuration.ts` builds the settings of each process kind from
 * these declarations; `opsplatform doctor` lists them, and a test holds the
 * README's table to them. Nothing else reads the environment.
 */

/** The process kinds: `serve`, `worker`, and the other commands of the CLI. */
export type ProcessKind = "server" | "worker" | "cli"

export interface Variable<A> {
  readonly name: string
  readonly description: string
  /** What its absence means, as an operator reads it. */
  readonly absent: string
  /** A secret is never repeated back, not even in the message about a malformed value. */
  readonly secret: boolean
  readonly processes: ReadonlyArray<ProcessKind>
  /** The value: an empty or blank text counts as absent. */
  readonly config: Config.Config<A>
}

/** The processes that build core (every one): they read core's configuration. */
const everyProcess: ReadonlyArray<ProcessKind> = ["server", "worker", "cli"]
const serverOnly: ReadonlyArray<ProcessKind> = ["server"]

/** The first issue of a failed decoding, as "must be …". */
const issueOf = (error: Schema.SchemaError): string => error.message.split("\n")[0] ?? "is malformed"

const read = <A>(name: string, schema: Schema.Codec<A, string>, secret: boolean): Config.Config<Option.Option<A>> => {
  const decode = Schema.decodeUnknownResult(schema)
  return Config.option(Config.String(name)).pipe(
    Config.flatMap((text) => {
      if (Option.isNone(text) || text.value.trim() === "") return Config.succeed(Option.none())
      const decoded = decode(text.value)
      return Result.isSuccess(decoded)
        ? Config.succeed(Option.some(decoded.success))
        : Config.fail(new ConfigProvider.SourceError({
          message: secret ? `${name} ${issueOf(decoded.failure)}` : `${name} ${issueOf(decoded.failure)}, got '${text.value}'`
        }))
    })
  )
}

interface Declaration {
  readonly description: string
  readonly processes?: ReadonlyArray<ProcessKind> | undefined
}

/** A variable with a default. */
const withDefault = <A>(
  name: string,
  schema: Schema.Codec<A, string>,
  options: Declaration & { readonly default: A; readonly absent?: string | undefined }
): Variable<A> => ({
  name,
  description: options.description,
  absent: options.absent ?? String(options.default),
  secret: false,
  processes: options.processes ?? everyProcess,
  config: Config.map(read(name, schema, false), Option.getOrElse(() => options.default))
})

/** A variable whose absence means something of its own (no key, no CA, the request's origin). */
const optional = <A>(
  name: string,
  schema: Schema.Codec<A, string>,
  options: Declaration & { readonly absent: string; readonly secret?: boolean | undefined }
): Variable<Option.Option<A>> => ({
  name,
  description: options.description,
  absent: options.absent,
  secret: options.secret ?? false,
  processes: options.processes ?? everyProcess,
  config: read(name, schema, options.secret ?? false)
})

// ---------------------------------------------------------------- value schemas

const integer = (minimum: number, maximum: number, message: string) =>
  Schema.NumberFromString.check(Schema.makeFilter((n: number) => (Number.isInteger(n) && n >= minimum && n <= maximum) || message))

const PositiveInt = integer(1, Number.MAX_SAFE_INTEGER, "must be a positive integer")
const Seconds = integer(1, 86_400, "must be a whole number of seconds from 1 to 86400")
const Text = Schema.String
const Switch = Schema.Literals(["true", "false"]).annotate({ message: "must be true or false" }).pipe(
  Schema.decodeTo(
    Schema.Boolean,
    SchemaTransformation.transform({ decode: (s) => s === "true", encode: (b) => (b ? "true" : "false") })
  )
)
/** A secret's text, kept redacted once read. */
const secretText = (text: Schema.Codec<string, string> = Schema.String) =>
  text.pipe(Schema.decodeTo(
    Schema.Redacted(Schema.String),
    SchemaTransformation.transform({ decode: (s) => Redacted.make(s), encode: (r) => Redacted.value(r) })
  ))
const HttpUrl = Schema.String.check(Schema.isPattern(/^https?:\/\/[^\s/]+/, { message: "must be an http(s) URL" }))

// ---------------------------------------------------------------- database and process

export const DATABASE_URL = optional("DATABASE_URL", Text, {
  description: "The PostgreSQL to use (postgres://user:password@host:port/database)",
  absent: "an embedded PostgreSQL (PGlite) in OPSPLATFORM_DATA_DIR"
})
/** The default connections per process: 4 servers and 2 workers stay at 60, under PostgreSQL's default of 100. */
export const DEFAULT_POOL_SIZE = 10

export const DATABASE_POOL_SIZE = withDefault("DATABASE_POOL_SIZE", integer(1, 1000, "must be an integer from 1 to 1000"), {
  description: "PostgreSQL connections per process (a server's credential listener and a worker's LISTEN are among them)",
  default: DEFAULT_POOL_SIZE
})
export const OPSPLATFORM_DATA_DIR = withDefault("OPSPLATFORM_DATA_DIR", Text, {
  description: "The embedded database's directory, without DATABASE_URL",
  default: "./.data"
})
export const OPSPLATFORM_CREDENTIAL_CACHE = withDefault(
  "OPSPLATFORM_CREDENTIAL_CACHE",
  Schema.Literals(["on", "off"]).annotate({ message: "must be \"on\" or \"off\"" }),
  {
    description: "Authentication's credential cache on PostgreSQL; off behind a pooler that cannot LISTEN",
    default: "on"
  }
)
export const OPSPLATFORM_SECRET_KEY = optional("OPSPLATFORM_SECRET_KEY", secretText(), {
  description: "The operator key (32 bytes as base64 or 64 hex digits) that seals webhook and mailbox secrets; " +
    "the same on every process sharing a database",
  absent: "embedded: a key file in the data directory; PostgreSQL: serve and worker refuse to start",
  secret: true
})
export const OPSPLATFORM_LOG_LEVEL = withDefault("OPSPLATFORM_LOG_LEVEL", Text, {
  description: "The least severe log level written: All, Trace, Debug, Info, Warn, Error, Fatal or None",
  default: "Info"
})
export const OPSPLATFORM_LOG_FORMAT = withDefault("OPSPLATFORM_LOG_FORMAT", Text, {
  description: "json (one object a line, for collectors) or pretty (for people)",
  default: "json"
})

// ---------------------------------------------------------------- the server

export const PORT = withDefault("PORT", integer(0, 65_535, "must be a port number from 0 to 65535"), {
  description: "The port `serve` listens on (its --port flag wins)",
  default: 8080,
  processes: serverOnly
})
export const OPSPLATFORM_PUBLIC_URL = optional("OPSPLATFORM_PUBLIC_URL", Text, {
  description: "The server's public base URL: the OAuth issuer and the root of every OAuth address (served cacheable)",
  absent: "the Host of a request from this machine or through a trusted proxy; otherwise localhost (`doctor` warns)",
  processes: serverOnly
})

/** Addresses (`10.0.0.7`) and networks (`10.0.0.0/8`, `fd00::/8`), comma-separated. */
const parseNetwork = (part: string): Result.Result<IpNetwork.IpNetwork, unknown> =>
  part.includes("/")
    ? IpNetwork.fromString(part)
    : Result.flatMap(NetAddress.ipFromString(part), (ip) => IpNetwork.fromAddress(ip, NetAddress.width(ip)))
const networkParts = (text: string) => text.split(",").map((p) => p.trim()).filter((p) => p !== "")
const Networks = Schema.String.check(Schema.makeFilter((text: string) => {
  const bad = networkParts(text).find((part) => Result.isFailure(parseNetwork(part)))
  return bad === undefined || `must be comma-separated IP addresses or networks (CIDR); '${bad}' is neither`
})).pipe(Schema.decodeTo(
  Schema.Array(Schema.Any as Schema.Codec<IpNetwork.IpNetwork>),
  SchemaTransformation.transform({
    decode: (text): ReadonlyArray<IpNetwork.IpNetwork> => networkParts(text).map((part) => Result.getOrThrow(parseNetwork(part))),
    encode: (networks: ReadonlyArray<IpNetwork.IpNetwork>) => networks.map(IpNetwork.format).join(",")
  })
))

export const OPSPLATFORM_TRUSTED_PROXIES = optional("OPSPLATFORM_TRUSTED_PROXIES", Networks, {
  description: "Proxies (comma-separated addresses or CIDR networks) whose X-Forwarded-For, -Host and -Proto are believed: " +
    "the client address that sign-in limits count, and the Host the OAuth issuer may follow",
  absent: "no proxy is believed: the client is the connection's peer",
  processes: serverOnly
})
export const OPSPLATFORM_OBLIGATIONS_INTERVAL_SEC = withDefault("OPSPLATFORM_OBLIGATIONS_INTERVAL_SEC", Seconds, {
  description: "Seconds between two passes of the obligation monitor inside serve",
  default: 60,
  processes: serverOnly
})
export const OPSPLATFORM_PULSE_INTERVAL_SEC = withDefault("OPSPLATFORM_PULSE_INTERVAL_SEC", Seconds, {
  description: "Seconds between two passes of the pulse job (the display's money figures) inside serve",
  default: 10,
  processes: serverOnly
})
export const OPSPLATFORM_FISCAL_CHECK_HOUR = withDefault("OPSPLATFORM_FISCAL_CHECK_HOUR", integer(0, 23, "must be an hour from 0 to 23"), {
  description: "The local hour from which an organization's customers are checked at the tax authority each day",
  default: 6,
  processes: serverOnly
})
export const OPSPLATFORM_FISCAL_INTERVAL_SEC = withDefault("OPSPLATFORM_FISCAL_INTERVAL_SEC", Seconds, {
  description: "Seconds between two passes of the fiscal check inside serve",
  default: 300,
  processes: serverOnly
})

// ---------------------------------------------------------------- password and PIN hashing

export const OPSPLATFORM_HASH_CONCURRENCY = withDefault(
  "OPSPLATFORM_HASH_CONCURRENCY",
  integer(1, 64, "must be an integer from 1 to 64"),
  {
    description: "Argon2id derivations (sign-ins, PINs, passwords) one process runs at once; each takes a core for 20–40 ms",
    default: PasswordHashing.defaultHashingBudget.concurrency
  }
)
export const OPSPLATFORM_HASH_QUEUE = withDefault("OPSPLATFORM_HASH_QUEUE", integer(0, 10_000, "must be an integer from 0 to 10000"), {
  description: "Derivations that may wait for one; past them a sign-in, PIN or password answers 503 with Retry-After",
  default: PasswordHashing.defaultHashingBudget.queueLimit
})

export const OPSPLATFORM_OAUTH_PER_NETWORK_PER_MIN = withDefault("OPSPLATFORM_OAUTH_PER_NETWORK_PER_MIN", PositiveInt, {
  description: "OAuth sign-in attempts, and authorization requests that store a session, per minute per client network " +
    "(an IPv4 address, an IPv6 /64); counted before any hashing",
  default: 30
})

// ---------------------------------------------------------------- webhooks

export const OPSPLATFORM_WEBHOOKS_ALLOW_PRIVATE = withDefault("OPSPLATFORM_WEBHOOKS_ALLOW_PRIVATE", Switch, {
  description: "true allows loopback and private webhook destinations (tests, closed networks)",
  default: false
})
export const OPSPLATFORM_WEBHOOKS_SCHEDULE_MS = optional(
  "OPSPLATFORM_WEBHOOKS_SCHEDULE_MS",
  Schema.String.check(Schema.isPattern(/^\s*\d+\s*(,\s*\d+\s*)*$/, { message: "must be comma-separated milliseconds" })),
  {
    description: "Delays after each failed attempt, comma-separated milliseconds (their count + 1 is the attempt budget)",
    absent: "5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h"
  }
)
export const OPSPLATFORM_WEBHOOKS_TIMEOUT_MS = withDefault("OPSPLATFORM_WEBHOOKS_TIMEOUT_MS", PositiveInt, {
  description: "Milliseconds one delivery attempt may take",
  default: 15_000
})
export const OPSPLATFORM_WEBHOOKS_LEASE_MS = optional("OPSPLATFORM_WEBHOOKS_LEASE_MS", PositiveInt, {
  description: "Milliseconds a claimed delivery stays its worker's",
  absent: "the attempt timeout + 15 s, at least 45 s"
})
export const OPSPLATFORM_WEBHOOKS_BATCH_SIZE = withDefault("OPSPLATFORM_WEBHOOKS_BATCH_SIZE", PositiveInt, {
  description: "Deliveries a worker claims per query",
  default: 100
})
export const OPSPLATFORM_WEBHOOKS_CONCURRENCY = withDefault("OPSPLATFORM_WEBHOOKS_CONCURRENCY", PositiveInt, {
  description: "Deliveries one worker has in flight at most",
  default: 200
})
export const OPSPLATFORM_WEBHOOKS_POLL_MS = withDefault("OPSPLATFORM_WEBHOOKS_POLL_MS", PositiveInt, {
  description: "Milliseconds between an idle worker's looks for due deliveries when nothing wakes it",
  default: 1_000
})
export const OPSPLATFORM_WEBHOOKS_MAX_SUBSCRIPTIONS = withDefault("OPSPLATFORM_WEBHOOKS_MAX_SUBSCRIPTIONS", PositiveInt, {
  description: "Webhook subscriptions an organization environment may have (409 past it)",
  default: WebhookSettings.defaultWebhookSettings.maxSubscriptions
})
export const OPSPLATFORM_WEBHOOKS_TESTS_PER_MIN = withDefault("OPSPLATFORM_WEBHOOKS_TESTS_PER_MIN", PositiveInt, {
  description: "Webhook test sends per minute per organization environment (429 with Retry-After past it)",
  default: WebhookSettings.defaultWebhookSettings.testsPerMinute
})
export const OPSPLATFORM_WEBHOOKS_REDELIVERIES_PER_MIN = withDefault("OPSPLATFORM_WEBHOOKS_REDELIVERIES_PER_MIN", PositiveInt, {
  description: "Webhook redeliveries asked for per minute per organization environment (429 with Retry-After past it)",
  default: WebhookSettings.defaultWebhookSettings.redeliveriesPerMinute
})
export const OPSPLATFORM_WEBHOOKS_CA_FILE = optional("OPSPLATFORM_WEBHOOKS_CA_FILE", Text, {
  description: "A PEM certificate to trust besides the system's, for receivers under a private CA",
  absent: "the system's certificates only"
})

// ---------------------------------------------------------------- mail

export const OPSPLATFORM_MAIL_INTERVAL_SEC = withDefault("OPSPLATFORM_MAIL_INTERVAL_SEC", Seconds, {
  description: "Seconds between two passes of the mail sync",
  default: 60
})
export const OPSPLATFORM_MAIL_LEASE_SEC = withDefault("OPSPLATFORM_MAIL_LEASE_SEC", Seconds, {
  description: "Seconds a claimed mailbox stays its process's",
  default: 600
})
export const OPSPLATFORM_MAIL_ALLOW_PRIVATE = withDefault("OPSPLATFORM_MAIL_ALLOW_PRIVATE", Switch, {
  description: "true allows loopback and private IMAP hosts (tests, closed networks)",
  default: false
})
export const OPSPLATFORM_MAIL_MAX_MAILBOXES = withDefault("OPSPLATFORM_MAIL_MAX_MAILBOXES", PositiveInt, {
  description: "Mailboxes an organization environment may have (409 past it)",
  default: MailSettings.defaultMailSettings.maxMailboxes
})
export const OPSPLATFORM_MAIL_CA_FILE = optional("OPSPLATFORM_MAIL_CA_FILE", Text, {
  description: "A PEM certificate to trust besides the system's, for IMAP servers under a private CA",
  absent: "the system's certificates only"
})

// ---------------------------------------------------------------- usage metering

const StripeBase = Schema.String.check(Schema.makeFilter((raw: string) => {
  try {
    const url = new URL(raw)
    // The SDK takes a host, a port and a protocol: a path or a query would be silently dropped.
    return ((url.protocol === "https:" || url.protocol === "http:") && (url.pathname === "/" || url.pathname === "") &&
      url.search === "") || "must be http(s)://host[:port] with no path or query"
  } catch {
    return "must be a URL such as https://api.stripe.com"
  }
}))
const StripeKey = (prefixes: ReadonlyArray<string>) =>
  secretText(Schema.String.check(Schema.makeFilter((k: string) =>
    prefixes.some((p) => k.startsWith(p)) || `must be a Stripe secret key starting with ${prefixes.join(" or ")}`
  )))

export const OPSPLATFORM_STRIPE_API_BASE = withDefault("OPSPLATFORM_STRIPE_API_BASE", StripeBase, {
  description: "Where the Stripe SDK sends meter events (a fake or stripe-mock in tests)",
  default: "https://api.stripe.com"
})
export const OPSPLATFORM_STRIPE_TEST_KEY = optional("OPSPLATFORM_STRIPE_TEST_KEY", StripeKey(["sk_test_", "rk_test_"]), {
  description: "The Stripe test-mode key that receives the sandbox's usage",
  absent: "sandbox usage waits as pending",
  secret: true
})
export const OPSPLATFORM_STRIPE_LIVE_KEY = optional("OPSPLATFORM_STRIPE_LIVE_KEY", StripeKey(["sk_live_", "rk_live_"]), {
  description: "The Stripe live-mode key that receives live usage",
  absent: "live usage waits as pending",
  secret: true
})
export const OPSPLATFORM_STRIPE_TIMEOUT_MS = withDefault("OPSPLATFORM_STRIPE_TIMEOUT_MS", PositiveInt, {
  description: "Milliseconds one call to Stripe may take",
  default: 15_000
})
export const OPSPLATFORM_METERING_LEASE_MS = optional("OPSPLATFORM_METERING_LEASE_MS", PositiveInt, {
  description: "Milliseconds a claimed usage stream stays its forwarder's",
  absent: "twice the Stripe timeout + 5 s, at least 60 s"
})
export const OPSPLATFORM_METERING_STREAMS = withDefault("OPSPLATFORM_METERING_STREAMS", PositiveInt, {
  description: "Usage streams (a customer's meter) one forwarder serves at once",
  default: 50
})
export const OPSPLATFORM_METERING_PER_STREAM = withDefault("OPSPLATFORM_METERING_PER_STREAM", PositiveInt, {
  description: "Records of one stream sent under one claim",
  default: 20
})
export const OPSPLATFORM_METERING_POLL_MS = withDefault("OPSPLATFORM_METERING_POLL_MS", PositiveInt, {
  description: "Milliseconds between an idle forwarder's looks for due records",
  default: 1_000
})
export const OPSPLATFORM_METERING_RETRY_BASE_MS = withDefault("OPSPLATFORM_METERING_RETRY_BASE_MS", PositiveInt, {
  description: "The first retry's delay after a failed forward, doubling each retry",
  default: 1_000
})
export const OPSPLATFORM_METERING_RETRY_MAX_MS = withDefault("OPSPLATFORM_METERING_RETRY_MAX_MS", PositiveInt, {
  description: "The longest delay between two retries of a forward",
  default: 600_000
})
export const OPSPLATFORM_METERING_GROUP_MAX = withDefault("OPSPLATFORM_METERING_GROUP_MAX", PositiveInt, {
  description: "Concurrent usage reports written in one statement at most (1: each by itself)",
  default: 100
})
export const OPSPLATFORM_METERING_GROUPS_IN_FLIGHT = withDefault("OPSPLATFORM_METERING_GROUPS_IN_FLIGHT", PositiveInt, {
  description: "Such statements at once",
  default: 2
})

// ---------------------------------------------------------------- the tax authority and couriers

export const OPSPLATFORM_ANAF_URL = withDefault("OPSPLATFORM_ANAF_URL", HttpUrl, {
  description: "The base address of the tax authority's (ANAF) web services",
  default: AnafRegistry.DEFAULT_ANAF_URL
})
export const OPSPLATFORM_ANAF_TIMEOUT_MS = withDefault("OPSPLATFORM_ANAF_TIMEOUT_MS", integer(1, 600_000, "must be an integer from 1 to 600000"), {
  description: "Milliseconds one call to ANAF may take",
  default: 30_000
})
export const OPSPLATFORM_ANAF_RETRIES = withDefault("OPSPLATFORM_ANAF_RETRIES", integer(0, 10, "must be an integer from 0 to 10"), {
  description: "Retries of a call ANAF answers with a 5xx or not at all",
  default: 3
})
export const OPSPLATFORM_ANAF_RETRY_BASE_MS = withDefault(
  "OPSPLATFORM_ANAF_RETRY_BASE_MS",
  integer(1, 600_000, "must be an integer from 1 to 600000"),
  { description: "The first retry's delay, doubling each retry", default: 1_000 }
)
export const OPSPLATFORM_ANAF_REQUESTS_PER_SECOND = withDefault(
  "OPSPLATFORM_ANAF_REQUESTS_PER_SECOND",
  integer(1, 100, "must be an integer from 1 to 100"),
  {
    description: "Calls a second to ANAF (its published limit is 1); more for a registry or a proxy in front of it that allows them",
    default: AnafRegistry.ANAF_REQUESTS_PER_SECOND
  }
)
export const OPSPLATFORM_HEAVY_RATE_PER_MIN = withDefault("OPSPLATFORM_HEAVY_RATE_PER_MIN", PositiveInt, {
  description: "Heavy-tier requests (cost comparisons) per minute per organization",
  default: 30
})

export const Couriers = Schema.Array(Schema.Struct({
  name: Schema.String.check(Schema.isMinLength(1)),
  url: Schema.String.check(Schema.isPattern(/^https?:\/\//, { message: "must be an http(s) URL" })),
  token: Schema.optionalKey(Schema.String)
})).check(Schema.isMinLength(1))

export const OPSPLATFORM_COURIERS = optional("OPSPLATFORM_COURIERS", Schema.fromJsonString(Couriers), {
  description: "JSON list of courier quote APIs [{\"name\",\"url\",\"token\"}], asked live for each stop",
  absent: "the organization's rate card prices the stops"
})
export const OPSPLATFORM_COURIER_TIMEOUT_MS = withDefault("OPSPLATFORM_COURIER_TIMEOUT_MS", PositiveInt, {
  description: "Milliseconds a courier has to answer",
  default: 2_000
})

// ---------------------------------------------------------------- observability

/** The processes that serve metrics and export traces: `serve` and `worker`. */
const serverAndWorker: ReadonlyArray<ProcessKind> = ["server", "worker"]

export const OPSPLATFORM_METRICS_PORT = optional(
  "OPSPLATFORM_METRICS_PORT",
  integer(0, 65_535, "must be a port number from 0 to 65535"),
  {
    description: "The port of a separate listener that serves Prometheus metrics on GET /metrics",
    absent: "no metrics listener, and no request metrics kept",
    processes: serverAndWorker
  }
)
export const OPSPLATFORM_METRICS_HOST = withDefault("OPSPLATFORM_METRICS_HOST", Text, {
  description: "The interface the metrics listener binds (0.0.0.0 for a Prometheus on another host)",
  default: "127.0.0.1",
  processes: serverAndWorker
})
export const OTEL_EXPORTER_OTLP_ENDPOINT = optional("OTEL_EXPORTER_OTLP_ENDPOINT", HttpUrl, {
  description: "The OTLP/HTTP collector spans are exported to (/v1/traces is appended), e.g. http://127.0.0.1:4318",
  absent: "no traces exported (and none kept)",
  processes: serverAndWorker
})
export const OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = optional("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", HttpUrl, {
  description: "The full OTLP/HTTP traces URL, used as it is (wins over OTEL_EXPORTER_OTLP_ENDPOINT)",
  absent: "OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces",
  processes: serverAndWorker
})
export const OTEL_EXPORTER_OTLP_HEADERS = optional(
  "OTEL_EXPORTER_OTLP_HEADERS",
  secretText(Schema.String.check(Schema.isPattern(/^[^=,]+=[^,]*(,[^=,]+=[^,]*)*$/, { message: "must be key=value pairs separated by commas" }))),
  {
    description: "Headers sent with every export, key=value pairs separated by commas (an API key, say)",
    absent: "no extra headers",
    secret: true,
    processes: serverAndWorker
  }
)
export const OTEL_TRACES_EXPORTER = withDefault(
  "OTEL_TRACES_EXPORTER",
  Schema.Literals(["otlp", "none"]).annotate({ message: "must be otlp or none" }),
  {
    description: "otlp (the specification's default) or none, which turns the export off while an endpoint is set",
    default: "otlp",
    processes: serverAndWorker
  }
)
export const OTEL_SDK_DISABLED = withDefault("OTEL_SDK_DISABLED", Switch, {
  description: "true turns tracing off whatever else is set",
  default: false,
  processes: serverAndWorker
})
export const OTEL_SERVICE_NAME = withDefault("OTEL_SERVICE_NAME", Text, {
  description: "The service.name the spans carry",
  default: "opsplatform",
  processes: serverAndWorker
})

/** Every variable, in the order `doctor` and the README list them. */
export const variables: ReadonlyArray<Variable<unknown>> = [
  DATABASE_URL,
  DATABASE_POOL_SIZE,
  OPSPLATFORM_DATA_DIR,
  OPSPLATFORM_CREDENTIAL_CACHE,
  OPSPLATFORM_SECRET_KEY,
  OPSPLATFORM_LOG_LEVEL,
  OPSPLATFORM_LOG_FORMAT,
  PORT,
  OPSPLATFORM_PUBLIC_URL,
  OPSPLATFORM_TRUSTED_PROXIES,
  OPSPLATFORM_OBLIGATIONS_INTERVAL_SEC,
  OPSPLATFORM_PULSE_INTERVAL_SEC,
  OPSPLATFORM_FISCAL_CHECK_HOUR,
  OPSPLATFORM_FISCAL_INTERVAL_SEC,
  OPSPLATFORM_HASH_CONCURRENCY,
  OPSPLATFORM_HASH_QUEUE,
  OPSPLATFORM_OAUTH_PER_NETWORK_PER_MIN,
  OPSPLATFORM_WEBHOOKS_ALLOW_PRIVATE,
  OPSPLATFORM_WEBHOOKS_SCHEDULE_MS,
  OPSPLATFORM_WEBHOOKS_TIMEOUT_MS,
  OPSPLATFORM_WEBHOOKS_LEASE_MS,
  OPSPLATFORM_WEBHOOKS_BATCH_SIZE,
  OPSPLATFORM_WEBHOOKS_CONCURRENCY,
  OPSPLATFORM_WEBHOOKS_POLL_MS,
  OPSPLATFORM_WEBHOOKS_MAX_SUBSCRIPTIONS,
  OPSPLATFORM_WEBHOOKS_TESTS_PER_MIN,
  OPSPLATFORM_WEBHOOKS_REDELIVERIES_PER_MIN,
  OPSPLATFORM_WEBHOOKS_CA_FILE,
  OPSPLATFORM_MAIL_INTERVAL_SEC,
  OPSPLATFORM_MAIL_LEASE_SEC,
  OPSPLATFORM_MAIL_ALLOW_PRIVATE,
  OPSPLATFORM_MAIL_MAX_MAILBOXES,
  OPSPLATFORM_MAIL_CA_FILE,
  OPSPLATFORM_STRIPE_API_BASE,
  OPSPLATFORM_STRIPE_TEST_KEY,
  OPSPLATFORM_STRIPE_LIVE_KEY,
  OPSPLATFORM_STRIPE_TIMEOUT_MS,
  OPSPLATFORM_METERING_LEASE_MS,
  OPSPLATFORM_METERING_STREAMS,
  OPSPLATFORM_METERING_PER_STREAM,
  OPSPLATFORM_METERING_POLL_MS,
  OPSPLATFORM_METERING_RETRY_BASE_MS,
  OPSPLATFORM_METERING_RETRY_MAX_MS,
  OPSPLATFORM_METERING_GROUP_MAX,
  OPSPLATFORM_METERING_GROUPS_IN_FLIGHT,
  OPSPLATFORM_ANAF_URL,
  OPSPLATFORM_ANAF_TIMEOUT_MS,
  OPSPLATFORM_ANAF_RETRIES,
  OPSPLATFORM_ANAF_RETRY_BASE_MS,
  OPSPLATFORM_ANAF_REQUESTS_PER_SECOND,
  OPSPLATFORM_HEAVY_RATE_PER_MIN,
  OPSPLATFORM_COURIERS,
  OPSPLATFORM_COURIER_TIMEOUT_MS,
  OPSPLATFORM_METRICS_PORT,
  OPSPLATFORM_METRICS_HOST,
  OTEL_EXPORTER_OTLP_ENDPOINT,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
  OTEL_EXPORTER_OTLP_HEADERS,
  OTEL_TRACES_EXPORTER,
  OTEL_SDK_DISABLED,
  OTEL_SERVICE_NAME
] as ReadonlyArray<Variable<unknown>>
