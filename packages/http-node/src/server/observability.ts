import { NodeHttpServer } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { Clock, Context, Duration, Effect, Layer, Logger, Metric, Redacted, Tracer } from "effect"
import * as Formatter from "effect/Formatter"
import { FetchHttpClient, HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { OtlpSerialization, OtlpTracer, PrometheusMetrics } from "effect/observability"
import { SqlClient } from "effect/sql"
import { createServer } from "node:http"
import { CoreMetrics } from "@opsplatform/core"
import { CoreConfig, type ObservabilitySettings } from "../config/Configuration.ts"
import { DEFAULT_POOL_SIZE } from "../config/variables.ts"

/**
 * What `serve` and `worker` show operators: Effect's metrics served to
 * Prometheus on a listener of their own, and Effect's spans exported over
 * OTLP/HTTP (decided: docs/decisions.md, "Metrics and traces"). Core keeps its
 * own metrics (`CoreMetrics`); this module adds the HTTP server's, the jobs',
 * and the gauges read from the database when Prometheus scrapes.
 */

// ---------------------------------------------------------------- HTTP

const secondsBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

const httpRequests = Metric.counter("opsplatform_http_requests_total", {
  description: "Requests answered, by route template, method and status",
  incremental: true
})
const httpDuration = Metric.histogram("opsplatform_http_request_duration_seconds", {
  description: "From a request's arrival to its answer, by route template and method",
  boundaries: secondsBuckets
})
const httpInFlight = Metric.gauge("opsplatform_http_requests_in_flight", {
  description: "Requests being handled now"
})
const httpRefusals = Metric.counter("opsplatform_http_refusals_total", {
  description: "Requests refused for their credential, their scope, their size or their rate, by status (401, 403, 413, 429)",
  incremental: true
})

const refusals = new Set([401, 403, 413, 429])

/** The label of a request no route answered: never its raw path. */
export const UNMATCHED_ROUTE = "unmatched"

/**
 * Whether the server keeps request metrics: on with a metrics listener, off
 * otherwise (the middleware then does not touch a metric).
 */
export const RequestMetrics = Context.Reference<boolean>("@opsplatform/http-node/RequestMetrics", {
  defaultValue: () => false
})

/** One request is being handled (+1) or is done (-1). */
export const requestsInFlight = (delta: 1 | -1): Effect.Effect<void> => Metric.modify(httpInFlight, delta)

/** A request answered: its route template (or `unmatched`), method, status and duration. */
export const requestAnswered = (route: string, method: string, status: number, seconds: number): Effect.Effect<void> =>
  Effect.andThen(
    Effect.all([
      Metric.update(Metric.withAttributes(httpRequests, { route, method, status: String(status) }), 1),
      Metric.update(Metric.withAttributes(httpDuration, { route, method }), seconds)
    ], { discard: true }),
    refusals.has(status) ? Metric.update(Metric.withAttributes(httpRefusals, { status: String(status) }), 1) : Effect.void
  )

/** The route template the router matched for the request running now (`/v1/locations/:id`), if any. */
export const matchedRoute: Effect.Effect<string | undefined> = Effect.withFiber((fiber) =>
  Effect.succeed(Context.getOrUndefined(fiber.context, HttpRouter.RouteContext)?.route.path)
)

// ---------------------------------------------------------------- background jobs

const jobPassDuration = Metric.histogram("opsplatform_job_pass_duration_seconds", {
  description: "How long each pass of a background job took, by job (the name label: Prometheus keeps job for the scrape)",
  boundaries: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300]
})
const jobItems = Metric.counter("opsplatform_job_items_total", {
  description: "Items a background job's passes handled (notices, contacts checked, messages, figures folded), by job",
  incremental: true
})
const jobLastSuccess = Metric.gauge("opsplatform_job_last_success_timestamp_seconds", {
  description: "When a background job's last pass succeeded (Unix seconds), by job"
})
const jobFailures = Metric.counter("opsplatform_job_pass_failures_total", {
  description: "Passes of a background job that failed, by job",
  incremental: true
})

/**
 * A pass of a background job, timed and counted under the job's label and
 * run in a span of its own (`job <name>`): its duration, the items it
 * answers, and the time of its last success, or one more failure.
 */
export const instrumentedPass = <E, R>(job: string, pass: Effect.Effect<number, E, R>): Effect.Effect<number, E, R> =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const items = yield* Effect.tapCause(pass, () => Metric.update(Metric.withAttributes(jobFailures, { name: job }), 1))
    const ended = yield* Clock.currentTimeMillis
    yield* Metric.update(Metric.withAttributes(jobPassDuration, { name: job }), (ended - started) / 1000)
    yield* Metric.update(Metric.withAttributes(jobItems, { name: job }), items)
    yield* Metric.update(Metric.withAttributes(jobLastSuccess, { name: job }), ended / 1000)
    return items
  }).pipe(Effect.withSpan(`job ${job}`, { attributes: { "job.name": job } }))

// ---------------------------------------------------------------- read from the database at each scrape

const webhooksDue = Metric.gauge("opsplatform_webhook_deliveries_due", {
  description: "Deliveries due now and not yet succeeded or given up, on enabled subscriptions"
})
const webhooksOldestDue = Metric.gauge("opsplatform_webhook_oldest_due_age_seconds", {
  description: "How long the oldest due delivery has been due (0 when none is)"
})
const subscriptionsDisabled = Metric.gauge("opsplatform_webhook_subscriptions_disabled", {
  description: "Subscriptions disabled now (by their owner or for a 410 Gone)"
})
const meteringWaiting = Metric.gauge("opsplatform_metering_records_waiting", {
  description: "Usage records not yet forwarded to the payment processor (pending, retrying or sending)"
})
const meteringOldest = Metric.gauge("opsplatform_metering_oldest_waiting_age_seconds", {
  description: "How long the oldest usage record not yet forwarded has waited (0 when none does)"
})
const databaseConnections = Metric.gauge("opsplatform_db_connections", {
  description: "This installation's PostgreSQL connections (every process) by state: active, idle, idle in transaction, waiting on a lock"
})
const databasePoolSize = Metric.gauge("opsplatform_db_pool_max_connections", {
  description: "The most connections this process's pool opens"
})
const scrapeErrors = Metric.counter("opsplatform_metrics_scrape_errors_total", {
  description: "Scrapes whose database gauges could not be read (the previous values are served)",
  incremental: true
})

const connectionStates = ["active", "idle", "idle_in_transaction", "waiting"] as const

/** Every metric a process serves, registered when the listener starts so each is there (at 0) before its first event. */
const served: ReadonlyArray<Metric.Metric<never, unknown>> = [
  ...CoreMetrics.all,
  httpRequests,
  httpDuration,
  httpInFlight,
  httpRefusals,
  jobPassDuration,
  jobItems,
  jobLastSuccess,
  jobFailures,
  webhooksDue,
  webhooksOldestDue,
  subscriptionsDisabled,
  meteringWaiting,
  meteringOldest,
  databaseConnections,
  databasePoolSize,
  scrapeErrors
]

/** Reads the database's gauges: a handful of aggregate statements over partial indexes, bounded by a timeout. */
const sampleDatabase = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const pg = yield* PgClient.PgClient
  const now = new Date(yield* Clock.currentTimeMillis).toISOString()
  const [webhooks] = yield* sql<{ readonly due: number; readonly oldest: number | null; readonly disabled: number }>`
    SELECT
      (SELECT count(*)::int FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
        WHERE d.status IN ('pending', 'failed', 'sending') AND d.next_attempt_at <= ${now} AND s.enabled) AS due,
      (SELECT EXTRACT(EPOCH FROM (${now}::timestamptz - min(d.next_attempt_at)))::float8
        FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
        WHERE d.status IN ('pending', 'failed', 'sending') AND d.next_attempt_at <= ${now} AND s.enabled) AS oldest,
      (SELECT count(*)::int FROM webhook_subscriptions WHERE NOT enabled) AS disabled`
  const [usage] = yield* sql<{ readonly waiting: number; readonly oldest: number | null }>`
    SELECT count(*)::int AS waiting, EXTRACT(EPOCH FROM (${now}::timestamptz - min(r.created_at)))::float8 AS oldest
    FROM usage_forwarding f JOIN usage_records r ON r.id = f.usage_id
    WHERE f.status IN ('pending', 'retrying', 'sending')`
  const connections = yield* sql<{ readonly state: string; readonly count: number }>`
    SELECT CASE WHEN wait_event_type = 'Lock' THEN 'waiting' ELSE replace(coalesce(state, 'idle'), ' ', '_') END AS state,
      count(*)::int AS count
    FROM pg_stat_activity WHERE application_name = ${pg.config.applicationName ?? "opsplatform"} AND pid <> pg_backend_pid()
    GROUP BY 1`
  yield* Metric.update(webhooksDue, webhooks?.due ?? 0)
  yield* Metric.update(webhooksOldestDue, Math.max(0, webhooks?.oldest ?? 0))
  yield* Metric.update(subscriptionsDisabled, webhooks?.disabled ?? 0)
  yield* Metric.update(meteringWaiting, usage?.waiting ?? 0)
  yield* Metric.update(meteringOldest, Math.max(0, usage?.oldest ?? 0))
  // The scrape's own connection is not counted: it would always be the one active.
  for (const state of connectionStates) {
    const found = connections.find((c) => c.state === state)
    yield* Metric.update(Metric.withAttributes(databaseConnections, { state }), found?.count ?? 0)
  }
}).pipe(
  Effect.timeout(Duration.seconds(5)),
  Effect.catchCause(() => Metric.update(scrapeErrors, 1)),
  // The scrape is the operator's, not a request's: its statements are not traced.
  Effect.withTracerEnabled(false)
)

// ---------------------------------------------------------------- the listener and the exporter

/** Where the metrics listener listens (its port when 0 was asked for). */
export class MetricsListener extends Context.Service<MetricsListener, { readonly port: number }>()(
  "@opsplatform/http-node/MetricsListener"
) {}

const exposition = (poolSize: number) =>
  Effect.gen(function*() {
    yield* Metric.update(databasePoolSize, poolSize)
    yield* sampleDatabase
    const body = yield* PrometheusMetrics.format()
    return HttpServerResponse.text(body, { contentType: "text/plain; version=0.0.4; charset=utf-8" })
  })

/**
 * `GET /metrics` on a listener of its own (never the API's port, so the API's
 * callers never see it), over the process's database; nothing without
 * `OPSPLATFORM_METRICS_PORT`. Its output holds `MetricsListener` when it
 * listens (typed as nothing, since it may not).
 */
export const MetricsListenerLive: Layer.Layer<never, never, SqlClient.SqlClient | PgClient.PgClient | CoreConfig> = Layer.unwrap(
  Effect.map(CoreConfig, ({ database, observability }) => {
    const metrics = observability.metrics
    if (metrics === undefined) return Layer.empty
    const poolSize = database._tag === "Postgres" ? database.maxConnections ?? DEFAULT_POOL_SIZE : 1
    return Layer.effectContext(Effect.gen(function*() {
      yield* Effect.forEach(served, Metric.value, { discard: true })
      const routes = HttpRouter.use((router) => router.add("GET", "/metrics", exposition(poolSize)))
      const context = yield* Layer.build(
        HttpRouter.serve(routes, { disableLogger: true, disableListenLog: true }).pipe(
          Layer.provideMerge(NodeHttpServer.layer(() => createServer(), { port: metrics.port, host: metrics.host }))
        )
      )
      const address = Context.get(context, HttpServer.HttpServer).address as { readonly port: number }
      yield* Effect.logInfo("serving metrics").pipe(Effect.annotateLogs({ url: `http://${metrics.host}:${address.port}/metrics` }))
      return Context.make(MetricsListener, MetricsListener.of({ port: address.port }))
    }).pipe(Effect.orDie, Effect.withTracerEnabled(false))) as unknown as Layer.Layer<never, never, SqlClient.SqlClient | PgClient.PgClient>
  })
)

/** Spans exported over OTLP/HTTP (JSON) to the configured collector, as the batching exporter sends them. */
const tracing = (traces: NonNullable<ObservabilitySettings["traces"]>): Layer.Layer<never> =>
  OtlpTracer.layer({
    url: traces.url,
    resource: { serviceName: traces.serviceName, serviceVersion: "0.1.0" },
    headers: Redacted.value(traces.headers)
  }).pipe(Layer.provide(OtlpSerialization.layerJson), Layer.provide(FetchHttpClient.layer))

/**
 * A process's observability under `inner` (the server, or the worker, with
 * core beneath it): a metric registry of its own, request metrics when
 * `OPSPLATFORM_METRICS_PORT` is set, and the OTLP exporter when an endpoint
 * is. With neither, `inner` runs as it would without this layer.
 */
export const withObservability = <A, E, R>(inner: Layer.Layer<A, E, R>): Layer.Layer<A, E, Exclude<R, CoreConfig>> =>
  Layer.unwrap(Effect.map(CoreConfig, ({ observability }) =>
    inner.pipe(
      Layer.provide(Layer.succeed(RequestMetrics, observability.metrics !== undefined)),
      // Kept in the output too: what runs in the server's context later (a test's seeding) counts in it.
      Layer.provideMerge(Layer.sync(Metric.MetricRegistry, () => new Map())),
      observability.traces === undefined ? (l) => l : Layer.provide(tracing(observability.traces))
    ))).pipe(Layer.provide(CoreConfig.layer)) as Layer.Layer<A, E, Exclude<R, CoreConfig>>

// ---------------------------------------------------------------- log lines

/**
 * One JSON object a line, with the trace and span ids of the span the line was
 * written in when spans are exported, so a log line leads to its trace.
 */
export const jsonLogger = Logger.make((options) => {
  const structured = Logger.formatStructured.log(options) as Record<string, unknown>
  const span = Context.getOrUndefined(options.fiber.context, Tracer.ParentSpan)
  if (span !== undefined && options.fiber.getRef(Tracer.Tracer) !== Tracer.nativeTracer) {
    structured.traceId = span.traceId
    structured.spanId = span.spanId
  }
  return Formatter.formatJson(structured)
})
