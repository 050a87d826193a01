import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { DELIVERY_CHANNEL } from "../events/Outbox.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie } from "../shared/sql.ts"
import { keysetPage } from "../shared/sqlPage.ts"
import type { Tenant } from "../shared/tenant.ts"
import { toIso, toIsoOrNull } from "../shared/time.ts"
import {
  type ClaimedDelivery,
  type DeliveryFilter,
  type DeliveryOutcome,
  type DeliveryStatus,
  INLINE_ATTEMPTS,
  type WebhookAttempt,
  type WebhookDelivery
} from "./model.ts"

export interface ClaimRequest {
  readonly now: string
  readonly limit: number
  /** The lease: another worker may take the deliveries over after this instant. */
  readonly leaseUntil: string
  readonly claimToken: string
}

/**
 * Storage port for deliveries and their attempt log, and the worker's two
 * moves: `claim` leases due deliveries (skipping any another worker holds)
 * and `record` writes outcomes back — only where the lease is still the
 * recorder's, so a worker that lost its lease cannot overwrite the state.
 * Deliveries themselves are created by the Outbox, in the publishing
 * transaction.
 */
export class DeliveryRepo extends Context.Service<DeliveryRepo, {
  readonly find: (tenant: Tenant, subscriptionId: string, id: string) => Effect.Effect<Option.Option<WebhookDelivery>>
  readonly list: (
    tenant: Tenant,
    subscriptionId: string,
    filter: DeliveryFilter,
    page: PageRequest
  ) => Effect.Effect<Page<WebhookDelivery>>
  readonly listAttempts: (deliveryId: string, page: PageRequest) => Effect.Effect<Page<WebhookAttempt>>
  /**
   * Redeliver's write: back to `pending` with a fresh budget, due at `at` —
   * only if the delivery is still in `expected`; false when it moved meanwhile.
   */
  readonly reset: (tenant: Tenant, id: string, expected: DeliveryStatus, at: string) => Effect.Effect<boolean>
  readonly claim: (request: ClaimRequest) => Effect.Effect<ReadonlyArray<ClaimedDelivery>>
  readonly record: (outcomes: ReadonlyArray<DeliveryOutcome>, now: string) => Effect.Effect<void>
}>()("@opsplatform/core/webhooks/DeliveryRepo") {
  static readonly layerSql: Layer.Layer<DeliveryRepo, never, SqlClient.SqlClient> = Layer.effect(
    DeliveryRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const tenantIs = (t: Tenant) => sql`organization_id = ${t.organizationId} AND environment = ${t.environment}`

      const decodeAttempt = (r: any): WebhookAttempt => ({
        number: Number(r.number),
        attempted_at: toIso(r.created_at),
        status_code: r.status_code === null ? null : Number(r.status_code),
        duration_ms: Number(r.duration_ms),
        error: r.error,
        response_body: r.response_body,
        next_attempt_at: toIsoOrNull(r.next_attempt_at)
      })
      const decode = (r: any, attempts: ReadonlyArray<WebhookAttempt>): WebhookDelivery => ({
        id: r.id,
        subscription_id: r.subscription_id,
        event_id: r.event_id,
        event_type: r.event_type,
        status: r.status,
        attempt_count: Number(r.attempt_count),
        next_attempt_at: r.status === "succeeded" || r.status === "dead" ? null : toIsoOrNull(r.next_attempt_at),
        last_attempt_at: toIsoOrNull(r.last_attempt_at),
        last_status_code: r.last_status_code === null ? null : Number(r.last_status_code),
        last_error: r.last_error,
        attempts,
        created_at: toIso(r.created_at),
        updated_at: toIso(r.updated_at)
      })

      /** The latest attempts of each delivery, in one query. */
      const inlineAttempts = (ids: ReadonlyArray<string>) =>
        ids.length === 0
          ? Effect.succeed(new Map<string, Array<WebhookAttempt>>())
          : orDie(sql`SELECT * FROM (
                SELECT a.*, row_number() OVER (PARTITION BY delivery_id ORDER BY number DESC) AS rank
                FROM webhook_attempts a WHERE ${sql.in("delivery_id", ids)}
              ) latest WHERE rank <= ${INLINE_ATTEMPTS} ORDER BY number DESC`).pipe(
            Effect.map((rows) => {
              const byDelivery = new Map<string, Array<WebhookAttempt>>()
              for (const r of rows as ReadonlyArray<any>) {
                const list = byDelivery.get(r.delivery_id) ?? []
                list.push(decodeAttempt(r))
                byDelivery.set(r.delivery_id, list)
              }
              return byDelivery
            })
          )

      const decodeClaimed = (r: any): ClaimedDelivery => {
        const secrets = typeof r.secrets === "string" ? JSON.parse(r.secrets) : r.secrets
        return {
          id: r.id,
          tenant: { organizationId: r.organization_id, environment: r.environment },
          subscriptionId: r.subscription_id,
          url: r.url,
          eventId: r.event_id,
          eventType: r.event_type,
          payload: r.payload,
          attempts: Number(r.attempts),
          attemptNumber: Number(r.attempt_count),
          reclaimed: r.previous_status === "sending",
          claimToken: r.claim_token,
          secrets: secrets ?? []
        }
      }

      return DeliveryRepo.of({
        find: (tenant, subscriptionId, id) =>
          Effect.gen(function*() {
            const rows = yield* orDie(sql`SELECT * FROM webhook_deliveries
              WHERE id = ${id} AND subscription_id = ${subscriptionId} AND ${tenantIs(tenant)}`)
            const row = rows[0]
            if (row === undefined) return Option.none()
            const attempts = yield* inlineAttempts([id])
            return Option.some(decode(row, attempts.get(id) ?? []))
          }),
        list: (tenant, subscriptionId, filter, page) =>
          Effect.gen(function*() {
            const found = yield* keysetPage(sql, {
              table: "webhook_deliveries",
              where: sql.and([
                sql`subscription_id = ${subscriptionId}`,
                tenantIs(tenant),
                filter.status === undefined ? sql`TRUE` : sql`status = ${filter.status}`
              ]),
              page,
              decode: (r: any) => r
            })
            const attempts = yield* inlineAttempts(found.items.map((r: any) => r.id))
            return { items: found.items.map((r: any) => decode(r, attempts.get(r.id) ?? [])), meta: found.meta }
          }),
        listAttempts: (deliveryId, page) =>
          keysetPage(sql, { table: "webhook_attempts", where: sql`delivery_id = ${deliveryId}`, page, decode: decodeAttempt }),
        reset: (tenant, id, expected, at) =>
          orDie(sql`WITH moved AS (
              UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = ${at},
                locked_until = NULL, claim_token = NULL, updated_at = ${at}
              WHERE id = ${id} AND ${tenantIs(tenant)} AND status = ${expected} RETURNING id
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
            SELECT c.*, e.payload, s.url,
              (SELECT json_agg(json_build_object('id', w.id, 'sealed', w.sealed) ORDER BY w.created_at DESC, w.id DESC)
                FROM webhook_secrets w
                WHERE w.subscription_id = c.subscription_id AND (w.expires_at IS NULL OR w.expires_at > ${now})) AS secrets
            FROM claimed c
            JOIN outbox_events e ON e.id = c.outbox_event_id
            JOIN webhook_subscriptions s ON s.id = c.subscription_id`).pipe(
            Effect.map((rows) => rows.map(decodeClaimed))
          ),
        record: (outcomes, now) => {
          if (outcomes.length === 0) return Effect.void
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
          const log = outcomes.flatMap((o) =>
            o.log.map((a) => ({
              id: a.id,
              delivery_id: a.delivery_id,
              number: a.number,
              created_at: a.attempted_at,
              status_code: a.status_code,
              duration_ms: a.duration_ms,
              error: a.error,
              response_body: a.response_body,
              next_attempt_at: a.next_attempt_at
            }))
          )
          // One statement: lock the deliveries (so none is deleted under the insert), log every attempt
          // (a late attempt of a lost lease included, once per number), and move the state only where
          // the lease is still the recorder's.
          return orDie(sql`WITH input AS (
              SELECT * FROM jsonb_to_recordset(${JSON.stringify(states)}::jsonb) AS x(
                id uuid, claim_token uuid, status text, attempts integer, next_attempt_at timestamptz,
                last_attempt_at timestamptz, last_status_code integer, last_error text, disable boolean)
            ), live AS (
              SELECT d.id, d.subscription_id, d.claim_token FROM webhook_deliveries d
              WHERE d.id IN (SELECT id FROM input) FOR UPDATE
            ), logged AS (
              INSERT INTO webhook_attempts (id, delivery_id, number, created_at, status_code, duration_ms, error,
                response_body, next_attempt_at)
              SELECT a.id, a.delivery_id, a.number, a.created_at, a.status_code, a.duration_ms, a.error,
                a.response_body, a.next_attempt_at
              FROM jsonb_to_recordset(${JSON.stringify(log)}::jsonb) AS a(
                id uuid, delivery_id uuid, number integer, created_at timestamptz, status_code integer,
                duration_ms integer, error text, response_body text, next_attempt_at timestamptz)
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
            WHERE s.id IN (SELECT subscription_id FROM moved WHERE disable) AND s.enabled`).pipe(Effect.asVoid)
        }
      })
    })
  )
}
