import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { Ids } from "../shared/Ids.ts"
import { orDie } from "../shared/sql.ts"
import type { Tenant } from "../shared/tenant.ts"
import { nowIso } from "../shared/time.ts"

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
}

/**
 * The transactional outbox. `publish` must run inside the transaction of the
 * change that causes the event, so the event exists exactly when the change
 * does. Publishing an event id that already exists for the tenant is a no-op
 * (the same fact produces the same id).
 */
export class Outbox extends Context.Service<Outbox, {
  readonly publish: (tenant: Tenant, event: OutboxEvent) => Effect.Effect<void>
}>()("@opsplatform/core/events/Outbox") {
  static readonly layerSql: Layer.Layer<Outbox, never, SqlClient.SqlClient | Ids> = Layer.effect(
    Outbox,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const ids = yield* Ids
      return Outbox.of({
        publish: Effect.fn("Outbox.publish")(function*(tenant, event) {
          const id = yield* ids.uuid
          const at = yield* nowIso
          yield* orDie(sql`INSERT INTO outbox_events (id, event_id, organization_id, environment, type, data, created_at)
            VALUES (${id}, ${event.eventId}, ${tenant.organizationId}, ${tenant.environment}, ${event.type},
              ${JSON.stringify(event.data)}::jsonb, ${at})
            ON CONFLICT (organization_id, environment, event_id) DO NOTHING`)
        })
      })
    })
  )
}
