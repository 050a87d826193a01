import { Effect, Metric } from "effect"

/**
 * The metrics core keeps, as Effect metrics (decided: docs/decisions.md,
 * "Metrics and traces"). They live in the metric registry of the context they
 * run in; the host serves that registry to Prometheus. Every label is from a
 * short fixed set (an event type, an outcome, an error kind): never an
 * organization, an id, a URL or a token.
 */

/** Delays from 10 ms to an hour, in seconds. */
const delayBuckets = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600]

export const outboxEventsPublished = Metric.counter("opsplatform_outbox_events_published_total", {
  description: "Events committed to the outbox, by event type",
  incremental: true
})

export const webhookAttempts = Metric.counter("opsplatform_webhook_attempts_total", {
  description: "Webhook delivery attempts by the state they left the delivery in: succeeded, failed (retried later) or dead",
  incremental: true
})

export const webhookDeliveriesDead = Metric.counter("opsplatform_webhook_deliveries_dead_total", {
  description: "Deliveries given up after their last attempt",
  incremental: true
})

export const webhookFirstAttemptDelay = Metric.histogram("opsplatform_webhook_first_attempt_delay_seconds", {
  description: "From an event's publication to the first attempt of each of its deliveries",
  boundaries: delayBuckets
})

export const webhookSubscriptionsDisabled = Metric.counter("opsplatform_webhook_subscriptions_disabled_total", {
  description: "Subscriptions disabled because their receiver answered 410 Gone",
  incremental: true
})

export const meteringProcessorCalls = Metric.counter("opsplatform_metering_processor_calls_total", {
  description: "Calls to the payment processor by outcome: accepted, already_recorded, refused, unavailable",
  incremental: true
})

export const databaseStatementErrors = Metric.counter("opsplatform_db_statement_errors_total", {
  description: "SQL statements that failed, by the kind of failure",
  incremental: true
})

export const credentialCacheLookups = Metric.counter("opsplatform_credential_cache_lookups_total", {
  description: "Authentication's credential lookups on a server with the cache, by result: hit or miss",
  incremental: true
})

export const listenConnected = Metric.gauge("opsplatform_db_listen_connected", {
  description: "1 while the process listens on the channel (credentials: the credential cache; webhooks: cross-process wake-ups), else 0"
})

/** Every metric above: the host registers them at start, so each is served (at 0) before its first event. */
export const all: ReadonlyArray<Metric.Metric<never, unknown>> = [
  outboxEventsPublished,
  webhookAttempts,
  webhookDeliveriesDead,
  webhookFirstAttemptDelay,
  webhookSubscriptionsDisabled,
  meteringProcessorCalls,
  databaseStatementErrors,
  credentialCacheLookups,
  listenConnected
]

/** Adds one to `metric` under `labels`. */
export const countOne = (metric: Metric.Metric<number, unknown>, labels: Readonly<Record<string, string>>): Effect.Effect<void> =>
  Metric.update(Metric.withAttributes(metric, labels), 1)
