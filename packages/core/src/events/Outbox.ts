import { Clock, Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { Ids } from "../shared/Ids.ts"
import { orDie } from "../shared/sql.ts"
import type { Tenant } from "../shared/tenant.ts"
import { isoFromMillis } from "../shared/time.ts"
import { deliveredData, type OutboxEvent } from "./catalog.ts"
import { MAX_EVENT_PAYLOAD_BYTES } from "../shared/limits.ts"
import { countOne, outboxEventsPublished } from "../shared/metrics.ts"

export type { OutboxEvent } from "./catalog.ts"

export interface StoredOutboxEvent extends OutboxEvent {
  readonly id: string
  readonly organizationId: string
  readonly environment: Tenant["environment"]
  readonly createdAt: string
  /** The webhook body every delivery of this event sends. */
  readonly payload: string
}

/** Largest webhook body (payloads up to 256 KiB: docs/decisions.md, "Design: events and webhooks"; shared/limits.ts). */
export const MAX_PAYLOAD_BYTES = MAX_EVENT_PAYLOAD_BYTES

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

/** The stored event of a tenant, built the same way by every store. */
export const storedEvent = (tenant: Tenant, event: OutboxEvent, id: string, createdMs: number): StoredOutboxEvent => ({
  ...event,
  id,
  organizationId: tenant.organizationId,
  environment: tenant.environment,
  createdAt: isoFromMillis(createdMs),
  payload: eventPayload(tenant, event, createdMs)
})

/**
 * What happens to an event once it is stored, inside the same transaction.
 * The outbox knows no delivery mechanism: the host installs the listener
 * (core's layers install the webhook fan-out), so a rolled-back change leaves
 * neither the event nor anything the listener wrote.
 */
export class OutboxListener extends Context.Service<OutboxListener, {
  readonly published: (tenant: Tenant, event: StoredOutboxEvent) => Effect.Effect<void>
}>()("@opsplatform/core/events/OutboxListener") {
  /** No listener: events are kept and nothing else happens. */
  static readonly none: Layer.Layer<OutboxListener> = Layer.succeed(OutboxListener, { published: () => Effect.void })
}

/**
 * The transactional outbox. `publish` must run inside the transaction of the
 * change that causes the event, so the event exists exactly when the change
 * does. Publishing an event id that already exists for the tenant is a no-op
 * (the same fact produces the same id) and answers none; a new event is
 * handed to the `OutboxListener` in the same transaction.
 */
export class Outbox extends Context.Service<Outbox, {
  readonly publish: (tenant: Tenant, event: OutboxEvent) => Effect.Effect<Option.Option<StoredOutboxEvent>>
}>()("@opsplatform/core/events/Outbox") {
  static readonly layerSql: Layer.Layer<Outbox, never, SqlClient.SqlClient | Ids | OutboxListener> = Layer.effect(
    Outbox,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const ids = yield* Ids
      const listener = yield* OutboxListener

      return Outbox.of({
        publish: Effect.fn("Outbox.publish")(function*(tenant, event) {
          return yield* sql.withTransaction(Effect.gen(function*() {
            const stored = storedEvent(tenant, event, yield* ids.uuid, yield* Clock.currentTimeMillis)
            const inserted = yield* sql`INSERT INTO outbox_events (id, event_id, organization_id, environment, type, data,
                payload, created_at, processed_at)
              VALUES (${stored.id}, ${stored.eventId}, ${tenant.organizationId}, ${tenant.environment}, ${stored.type},
                ${JSON.stringify(stored.data)}, ${stored.payload}, ${stored.createdAt}, ${stored.createdAt})
              ON CONFLICT (organization_id, environment, event_id) DO NOTHING
              RETURNING id`
            if (inserted.length === 0) return Option.none()
            yield* sql.afterCommit(countOne(outboxEventsPublished, { type: stored.type }))
            yield* listener.published(tenant, stored)
            return Option.some(stored)
          })).pipe(orDie)
        })
      })
    })
  )
}
