import { Clock, Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { Ids } from "../shared/Ids.ts"
import { orDie } from "../shared/sql.ts"
import type { Tenant } from "../shared/tenant.ts"
import { isoFromMillis } from "../shared/time.ts"
import { DeliverySignal } from "../webhooks/DeliverySignal.ts"
import { deliveredData } from "./catalog.ts"

/** A domain event as the outbox keeps it, before any delivery. */
export interface OutboxEvent {
  /** The public event id (`evt_...`); deterministic where the spec fixes a format. */
  readonly eventId: string
  readonly type: string
  readonly data: Record<string, unknown>
}

export interface StoredOutboxEvent extends OutboxEvent {
  readonly id: string
  readonly organizationId: string
  readonly environment: Tenant["environment"]
  readonly createdAt: string
  /** The webhook body every delivery of this event sends. */
  readonly payload: string
}

/** Largest webhook body (DESIGN: payloads up to 256 KiB). */
export const MAX_PAYLOAD_BYTES = 256 * 1024

/** The PostgreSQL channel told when deliveries commit, so workers in other processes wake at once. */
export const DELIVERY_CHANNEL = "opsplatform_webhook_deliveries"

/**
 * The webhook body of an event: the envelope, with the organization added to
 * `data`. Fixed when the event is published, so every delivery and
 * redelivery of it carries the same bytes.
 */
export const eventPayload = (tenant: Tenant, event: OutboxEvent, createdMs: number): string => {
  const payload = JSON.stringify({
    id: event.eventId,
    type: event.type,
    created: Math.floor(createdMs / 1000),
    environment: tenant.environment,
    data: deliveredData(event.data, tenant.organizationId)
  })
  const size = new TextEncoder().encode(payload).length
  if (size > MAX_PAYLOAD_BYTES) {
    // Events carry identifiers and short fields by design: a body this large is a producer's bug.
    throw new RangeError(`The ${event.type} event ${event.eventId} is ${size} bytes; webhook bodies are limited to ${MAX_PAYLOAD_BYTES}`)
  }
  return payload
}

/**
 * The transactional outbox. `publish` must run inside the transaction of the
 * change that causes the event, so the event exists exactly when the change
 * does. Publishing an event id that already exists for the tenant is a no-op
 * (the same fact produces the same id).
 *
 * Fan-out happens in the same transaction: one delivery per enabled
 * subscription of the tenant that lists the event's type, so a rolled-back
 * change leaves neither event nor delivery, and a committed one is already
 * queued for the workers (the event row is marked processed at once).
 */
export class Outbox extends Context.Service<Outbox, {
  readonly publish: (tenant: Tenant, event: OutboxEvent) => Effect.Effect<void>
  /**
   * Publishes an event for one subscription of the tenant only, whatever its
   * types (the test ping). Returns the delivery id, or none when the event id
   * already existed or the subscription is not the tenant's.
   */
  readonly publishTo: (tenant: Tenant, event: OutboxEvent, subscriptionId: string) => Effect.Effect<Option.Option<string>>
}>()("@opsplatform/core/events/Outbox") {
  static readonly layerSql: Layer.Layer<Outbox, never, SqlClient.SqlClient | Ids | DeliverySignal> = Layer.effect(
    Outbox,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const ids = yield* Ids
      const signal = yield* DeliverySignal

      const write = (tenant: Tenant, event: OutboxEvent, onlySubscription: string | undefined) =>
        sql.withTransaction(Effect.gen(function*() {
          const id = yield* ids.uuid
          const ms = yield* Clock.currentTimeMillis
          const at = isoFromMillis(ms)
          const payload = eventPayload(tenant, event, ms)
          const targets = onlySubscription === undefined
            ? sql`s.enabled AND s.event_types @> ${JSON.stringify([event.type])}::jsonb`
            : sql`s.id = ${onlySubscription}`
          const rows = yield* sql<{ subscription_id: string | null }>`WITH ev AS (
              INSERT INTO outbox_events (id, event_id, organization_id, environment, type, data, payload, created_at,
                processed_at)
              VALUES (${id}, ${event.eventId}, ${tenant.organizationId}, ${tenant.environment}, ${event.type},
                ${JSON.stringify(event.data)}::jsonb, ${payload}, ${at}, ${at})
              ON CONFLICT (organization_id, environment, event_id) DO NOTHING
              RETURNING id
            )
            SELECT s.id AS subscription_id FROM ev
            LEFT JOIN webhook_subscriptions s ON s.organization_id = ${tenant.organizationId}
              AND s.environment = ${tenant.environment} AND ${targets}`
          const subscriptions = rows.flatMap((r) => (r.subscription_id === null ? [] : [r.subscription_id]))
          if (subscriptions.length === 0) return Option.none<string>()
          const deliveries = []
          for (const subscriptionId of subscriptions) {
            deliveries.push({
              id: yield* ids.uuid,
              organization_id: tenant.organizationId,
              environment: tenant.environment,
              subscription_id: subscriptionId,
              outbox_event_id: id,
              event_id: event.eventId,
              event_type: event.type,
              status: "pending",
              next_attempt_at: at,
              created_at: at,
              updated_at: at
            })
          }
          yield* sql`WITH queued AS (INSERT INTO webhook_deliveries ${sql.insert(deliveries as [any, ...Array<any>])} RETURNING 1)
            SELECT pg_notify(${DELIVERY_CHANNEL}, '') FROM (SELECT 1 FROM queued LIMIT 1) one`
          yield* sql.afterCommit(signal.notify)
          return Option.some(deliveries[0]!.id)
        })).pipe(orDie)

      return Outbox.of({
        publish: Effect.fn("Outbox.publish")(function*(tenant, event) {
          yield* write(tenant, event, undefined)
        }),
        publishTo: Effect.fn("Outbox.publishTo")(function*(tenant, event, subscriptionId) {
          return yield* write(tenant, event, subscriptionId)
        })
      })
    })
  )
}
