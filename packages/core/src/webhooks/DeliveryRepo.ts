import { Context, Effect, Layer, Option, Schema, Struct } from "effect"
import { SqlClient } from "effect/sql"
import type { StoredOutboxEvent } from "../events/Outbox.ts"
import { Json, NullableTimestamp, Timestamp } from "../shared/columns.ts"
import { Ids, newId } from "../shared/Ids.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie } from "../shared/sql.ts"
import { filterConditions, keysetPage, table, tenantTable } from "../shared/tables.ts"
import type { Tenant, TenantScoped } from "../shared/tenant.ts"
import {
  AttemptRecord,
  ClaimedDelivery,
  DeliveryFilter,
  type DeliveryOutcome,
  type DeliveryStatus,
  INLINE_ATTEMPTS,
  StoredDelivery,
  toWebhookAttempt,
  toWebhookDelivery,
  type WebhookAttempt,
  type WebhookDelivery,
  WebhookDeliveryId,
  type WebhookSubscriptionId
} from "./model.ts"

export interface ClaimRequest {
  readonly now: string
  readonly limit: number
  /** The lease: another worker may take the deliveries over after this instant. */
  readonly leaseUntil: string
  readonly claimToken: string
}

/** The PostgreSQL channel told when deliveries commit, so workers in other processes wake at once. */
export const DELIVERY_CHANNEL = "opsplatform_webhook_deliveries"

/** A new delivery of a stored event to one subscription: pending, due when the event was stored. */
export const queuedDelivery = (
  id: WebhookDeliveryId,
  subscriptionId: WebhookSubscriptionId,
  event: StoredOutboxEvent
): StoredDelivery => ({
  id,
  subscription_id: subscriptionId,
  outbox_event_id: event.id,
  event_id: event.eventId,
  event_type: event.type,
  status: "pending",
  attempts: 0,
  attempt_count: 0,
  next_attempt_at: event.createdAt,
  locked_until: null,
  claim_token: null,
  last_attempt_at: null,
  last_status_code: null,
  last_error: null,
  created_at: event.createdAt,
  updated_at: event.createdAt
})

/** A stored delivery, its instants as timestamptz. */
export const DeliveryRow = StoredDelivery.mapFields(Struct.assign({
  next_attempt_at: NullableTimestamp,
  last_attempt_at: NullableTimestamp,
  locked_until: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp
}))

export const AttemptRow = AttemptRecord.mapFields(Struct.assign({ created_at: Timestamp, next_attempt_at: NullableTimestamp }))

/**
 * What the claim statement returns: the leased delivery with its tenant and
 * secrets gathered as json, under the delivery table's column names.
 */
const ClaimedRow = ClaimedDelivery.mapFields(Struct.assign({
  eventCreatedAt: Timestamp,
  tenant: Json(ClaimedDelivery.fields.tenant),
  secrets: Json(ClaimedDelivery.fields.secrets)
})).pipe(Schema.encodeKeys({
  subscriptionId: "subscription_id",
  eventId: "event_id",
  eventType: "event_type",
  eventCreatedAt: "event_created_at",
  attemptNumber: "attempt_count",
  claimToken: "claim_token"
}))

/**
 * Storage port for deliveries and their attempt log, and the worker's two
 * moves: `claim` leases due deliveries (skipping any another worker holds)
 * and `record` writes outcomes back — only where the lease is still the
 * recorder's, so a worker that lost its lease cannot overwrite the state.
 * Deliveries are created by `enqueue`, which the webhook fan-out runs in the
 * publishing transaction of each event. Attempts carry no tenant of their
 * own: they are reached through their delivery.
 */
export class DeliveryRepo extends Context.Service<DeliveryRepo, TenantScoped<{
  /**
   * Queues the event for delivery, due now: to every enabled subscription of
   * the tenant that lists its type, or to the one subscription given (whatever
   * its types) when it is the tenant's. Answers the new deliveries' ids.
   */
  readonly enqueue: (
    tenant: Tenant,
    event: StoredOutboxEvent,
    subscriptionId?: WebhookSubscriptionId | undefined
  ) => Effect.Effect<ReadonlyArray<WebhookDeliveryId>>
  readonly find: (
    tenant: Tenant,
    subscriptionId: WebhookSubscriptionId,
    id: WebhookDeliveryId
  ) => Effect.Effect<Option.Option<WebhookDelivery>>
  readonly list: (
    tenant: Tenant,
    subscriptionId: WebhookSubscriptionId,
    filter: DeliveryFilter,
    page: PageRequest
  ) => Effect.Effect<Page<WebhookDelivery>>
  /** The attempts of the tenant's delivery, newest first; none for a delivery of another tenant. */
  readonly listAttempts: (tenant: Tenant, deliveryId: WebhookDeliveryId, page: PageRequest) => Effect.Effect<Page<WebhookAttempt>>
  /**
   * Redeliver's write: back to `pending` with a fresh budget, due at `at` —
   * only if the delivery is still in `expected`; false when it moved meanwhile.
   */
  readonly reset: (tenant: Tenant, id: WebhookDeliveryId, expected: DeliveryStatus, at: string) => Effect.Effect<boolean>
  /** Cross-tenant: workers lease whatever is due, of every organization. */
  readonly claim: (request: ClaimRequest) => Effect.Effect<ReadonlyArray<ClaimedDelivery>>
  /** Cross-tenant: writes back the outcomes of claims, each under its own lease's claim token. */
  readonly record: (outcomes: ReadonlyArray<DeliveryOutcome>, now: string) => Effect.Effect<void>
}, "claim" | "record">>()("@opsplatform/core/webhooks/DeliveryRepo") {
  static readonly layerSql: Layer.Layer<DeliveryRepo, never, SqlClient.SqlClient | Ids> = Layer.effect(
    DeliveryRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const ids = yield* Ids
      const deliveries = tenantTable(sql, { name: "webhook_deliveries", row: DeliveryRow })
      // The same table without the tenant rule, for its columns only: enqueue writes several rows in one statement.
      const deliveryColumns = table(sql, { name: "webhook_deliveries", row: DeliveryRow }).columns
      const attempts = table(sql, { name: "webhook_attempts", row: AttemptRow })
      const decodeClaimedRows = Schema.decodeUnknownEffect(Schema.Array(ClaimedRow))
      const decodeClaimed = (rows: ReadonlyArray<unknown>) => Effect.orDie(decodeClaimedRows(rows))

      /** The latest attempts of each delivery, in one query. */
      const inlineAttempts = (deliveryIds: ReadonlyArray<string>) =>
        deliveryIds.length === 0
          ? Effect.succeed(new Map<string, Array<WebhookAttempt>>())
          : attempts.all(sql`SELECT * FROM (
                SELECT a.*, row_number() OVER (PARTITION BY delivery_id ORDER BY number DESC) AS rank
                FROM webhook_attempts a WHERE ${sql.in("delivery_id", deliveryIds)}
              ) latest WHERE rank <= ${INLINE_ATTEMPTS} ORDER BY number DESC`).pipe(
            Effect.map((rows) => {
              const byDelivery = new Map<string, Array<WebhookAttempt>>()
              for (const a of rows) {
                const list = byDelivery.get(a.delivery_id) ?? []
                list.push(toWebhookAttempt(a))
                byDelivery.set(a.delivery_id, list)
              }
              return byDelivery
            })
          )

      const withAttempts = (stored: ReadonlyArray<StoredDelivery>) =>
        Effect.map(
          inlineAttempts(stored.map((d) => d.id)),
          (byDelivery) => stored.map((d) => toWebhookDelivery(d, byDelivery.get(d.id) ?? []))
        )

      return DeliveryRepo.of({
        enqueue: (tenant, event, subscriptionId) =>
          Effect.gen(function*() {
            const targets = subscriptionId === undefined
              ? sql`enabled AND event_types @> ${JSON.stringify([event.type])}::jsonb`
              : sql`id = ${subscriptionId}`
            const subscriptions = yield* orDie(sql<{ readonly id: WebhookSubscriptionId }>`SELECT id FROM webhook_subscriptions
              WHERE organization_id = ${tenant.organizationId} AND environment = ${tenant.environment} AND ${targets}`)
            const rows: Array<Record<string, unknown>> = []
            const queued: Array<WebhookDeliveryId> = []
            for (const s of subscriptions) {
              const delivery = queuedDelivery(yield* newId(ids, WebhookDeliveryId), s.id, event)
              rows.push({
                ...(yield* deliveryColumns(delivery)),
                organization_id: tenant.organizationId,
                environment: tenant.environment
              })
              queued.push(delivery.id)
            }
            const [first, ...rest] = rows
            if (first === undefined) return []
            yield* orDie(sql`WITH queued AS (INSERT INTO ${deliveries.name} ${sql.insert([first, ...rest])} RETURNING 1)
              SELECT pg_notify(${DELIVERY_CHANNEL}, '') FROM (SELECT 1 FROM queued LIMIT 1) one`)
            return queued
          }),
        find: (tenant, subscriptionId, id) =>
          Effect.gen(function*() {
            const found = yield* deliveries.find(tenant, [sql`id = ${id}`, sql`subscription_id = ${subscriptionId}`])
            if (Option.isNone(found)) return Option.none()
            const [delivery] = yield* withAttempts([found.value])
            return Option.fromNullishOr(delivery)
          }),
        list: (tenant, subscriptionId, filter, page) =>
          Effect.gen(function*() {
            const found = yield* deliveries.page(
              tenant,
              [sql`subscription_id = ${subscriptionId}`, ...filterConditions(sql, DeliveryFilter, filter)],
              page
            )
            return { items: yield* withAttempts(found.items), meta: found.meta }
          }),
        listAttempts: (tenant, deliveryId, page) =>
          keysetPage(sql, {
            table: attempts.name,
            select: attempts.select,
            where: sql`delivery_id IN (SELECT id FROM webhook_deliveries WHERE ${deliveries.where(tenant, [sql`id = ${deliveryId}`])})`,
            page,
            all: attempts.all,
            filtered: true
          }).pipe(Effect.map((found) => ({ items: found.items.map(toWebhookAttempt), meta: found.meta }))),
        reset: (tenant, id, expected, at) =>
          orDie(sql`WITH moved AS (
              UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = ${at},
                locked_until = NULL, claim_token = NULL, updated_at = ${at}
              WHERE ${deliveries.where(tenant, [sql`id = ${id}`, sql`status = ${expected}`])} RETURNING id
            )
            SELECT id, pg_notify(${DELIVERY_CHANNEL}, '') FROM moved`).pipe(
            Effect.map((rows) => rows.length > 0)
          ),
        claim: ({ claimToken, leaseUntil, limit, now }) =>
          orDie(sql`WITH due AS (
              SELECT d.id, d.status AS previous_status
              FROM webhook_deliveries d
              JOIN webhook_subscriptions s ON s.id = d.subscription_id
              WHERE d.status IN ('pending', 'failed', 'sending') AND d.next_attempt_at <= ${now}
                AND (d.locked_until IS NULL OR d.locked_until <= ${now}) AND s.enabled
              ORDER BY d.next_attempt_at
              LIMIT ${limit}
              FOR UPDATE OF d SKIP LOCKED
            ), claimed AS (
              UPDATE webhook_deliveries d SET status = 'sending', locked_until = ${leaseUntil},
                claim_token = ${claimToken}, attempt_count = d.attempt_count + 1, updated_at = ${now}
              FROM due WHERE d.id = due.id
              RETURNING d.id, d.organization_id, d.environment, d.subscription_id, d.outbox_event_id, d.event_id,
                d.event_type, d.attempts, d.attempt_count, d.claim_token, due.previous_status
            )
            SELECT c.id, c.subscription_id, c.event_id, c.event_type, c.attempts, c.attempt_count, c.claim_token,
              json_build_object('organizationId', c.organization_id, 'environment', c.environment) AS tenant,
              c.previous_status = 'sending' AS reclaimed, e.payload, e.created_at AS event_created_at, s.url,
              COALESCE((SELECT json_agg(json_build_object('id', w.id, 'scheme', w.scheme, 'sealed', w.sealed) ORDER BY w.created_at DESC, w.id DESC)
                FROM webhook_secrets w
                WHERE w.subscription_id = c.subscription_id AND (w.expires_at IS NULL OR w.expires_at > ${now})), '[]'::json) AS secrets
            FROM claimed c
            JOIN outbox_events e ON e.id = c.outbox_event_id
            JOIN webhook_subscriptions s ON s.id = c.subscription_id`).pipe(Effect.flatMap(decodeClaimed)),
        record: (outcomes, now) =>
          Effect.gen(function*() {
            if (outcomes.length === 0) return
            const states = outcomes.map((o) => ({
              id: o.id,
              claim_token: o.claimToken,
              status: o.status,
              attempts: o.attempts,
              next_attempt_at: o.nextAttemptAt,
              last_attempt_at: o.lastAttemptAt,
              last_status_code: o.lastStatusCode,
              last_error: o.lastError,
              disable: o.disableSubscription
            }))
            const log = yield* Effect.forEach(outcomes.flatMap((o) => o.log), attempts.columns)
            // One statement: lock the deliveries (so none is deleted under the insert), log every attempt
            // (a late attempt of a lost lease included, once per number), and move the state only where
            // the lease is still the recorder's.
            yield* orDie(sql`WITH input AS (
                SELECT * FROM jsonb_to_recordset(${JSON.stringify(states)}::jsonb) AS x(
                  id uuid, claim_token uuid, status text, attempts integer, next_attempt_at timestamptz,
                  last_attempt_at timestamptz, last_status_code integer, last_error text, disable boolean)
              ), live AS (
                SELECT d.id, d.subscription_id, d.claim_token FROM webhook_deliveries d
                WHERE d.id IN (SELECT id FROM input) FOR UPDATE
              ), logged AS (
                INSERT INTO webhook_attempts
                SELECT a.* FROM jsonb_populate_recordset(NULL::webhook_attempts, ${JSON.stringify(log)}::jsonb) a
                WHERE a.delivery_id IN (SELECT id FROM live)
                ON CONFLICT (delivery_id, number) DO NOTHING
              ), moved AS (
                UPDATE webhook_deliveries d SET status = i.status, attempts = i.attempts,
                  next_attempt_at = i.next_attempt_at, locked_until = NULL, claim_token = NULL,
                  last_attempt_at = i.last_attempt_at, last_status_code = i.last_status_code,
                  last_error = i.last_error, updated_at = ${now}
                FROM input i JOIN live l ON l.id = i.id
                WHERE d.id = i.id AND l.claim_token = i.claim_token
                RETURNING d.subscription_id, i.disable
              )
              UPDATE webhook_subscriptions s SET enabled = FALSE, disabled_reason = 'endpoint_gone', updated_at = ${now}
              WHERE s.id IN (SELECT subscription_id FROM moved WHERE disable) AND s.enabled`)
          })
      })
    })
  )
}
