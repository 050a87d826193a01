import { Context, Effect, Layer, type Option, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { NullableTimestamp, Numeric, Timestamp } from "../shared/columns.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie } from "../shared/sql.ts"
import { tenantTable } from "../shared/tables.ts"
import type { Tenant, TenantScoped } from "../shared/tenant.ts"
import { StoredUsage, type SubscriptionStatus, type UsageFilter, UsageRecord, type UsageRecordId } from "./model.ts"
import { SubscriptionRow } from "./SubscriptionRepo.ts"

const usageColumns = {
  quantity: Numeric,
  timestamp: Timestamp,
  last_differing_retry_at: NullableTimestamp,
  created_at: Timestamp
}

export const UsageRow = StoredUsage.mapFields(Struct.assign(usageColumns))

/** A usage record with its forwarding, as the `usage_record_view` view reads them. */
export const UsageRecordRow = UsageRecord.mapFields(Struct.assign({
  ...usageColumns,
  next_attempt_at: NullableTimestamp,
  last_attempt_at: NullableTimestamp,
  forwarded_at: NullableTimestamp
}))

/** A report to record: everything but what it takes from its subscription. */
export type NewUsage = Omit<
  StoredUsage,
  "processor" | "processor_customer_id" | "meter_event_name" | "differing_retries" | "last_differing_retry_at"
>

/** What recording a report did. */
export type RecordOutcome =
  | { readonly _tag: "Recorded" }
  /** The subscription already has a record under the identifier: nothing was written. */
  | { readonly _tag: "AlreadyRecorded" }
  | { readonly _tag: "NoSubscription" }
  /** The subscription is not active: nothing was written. */
  | { readonly _tag: "NotActive"; readonly status: SubscriptionStatus }

/**
 * Storage port for usage records. `record` is the one write of a report, in
 * one statement: it reads the tenant's subscription and, while it is active,
 * writes the record (with the subscription's processor, customer and meter),
 * its forwarding (the outbox row, `pending`, due at once) and the stream of
 * its customer and meter, all or nothing. The store keeps one record per
 * identifier of a subscription forever (a unique index), whatever the
 * concurrency.
 */
export class UsageRepo extends Context.Service<UsageRepo, TenantScoped<{
  readonly record: (tenant: Tenant, usage: NewUsage) => Effect.Effect<RecordOutcome>
  readonly findByIdentifier: (
    tenant: Tenant,
    subscriptionId: string,
    identifier: string
  ) => Effect.Effect<Option.Option<StoredUsage>>
  /** Counts a retry under the record's identifier that said something else, at `at`. */
  readonly noteDifferingRetry: (tenant: Tenant, id: UsageRecordId, at: string) => Effect.Effect<void>
  readonly find: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<UsageRecord>>
  readonly list: (
    tenant: Tenant,
    subscriptionId: string,
    filter: UsageFilter,
    page: PageRequest
  ) => Effect.Effect<Page<UsageRecord>>
}>>()("@opsplatform/core/metering/UsageRepo") {
  static readonly layerSql: Layer.Layer<UsageRepo, never, SqlClient.SqlClient> = Layer.effect(
    UsageRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const usage = tenantTable(sql, { name: "usage_records", row: UsageRow })
      const subscriptions = tenantTable(sql, { name: "subscriptions", row: SubscriptionRow })
      const records = tenantTable(sql, { name: "usage_record_view", row: UsageRecordRow })
      return UsageRepo.of({
        record: (tenant, u) => {
            // The stream's id is its key's digest, so concurrent first reports of a customer and meter agree on it
            // without reading each other's uncommitted rows.
            const streamId = sql`md5(s.environment || E'\n' || s.processor || E'\n' || s.processor_customer_id || E'\n' ||
              s.meter_event_name)::uuid`
            return orDie(sql<{ readonly status: SubscriptionStatus; readonly recorded: boolean }>`WITH s AS (
                SELECT status, environment, processor, processor_customer_id, meter_event_name FROM subscriptions
                WHERE ${subscriptions.where(tenant, [sql`id = ${u.subscription_id}`])}
              ), active AS (
                SELECT * FROM s WHERE status = 'active'
              ), stream AS (
                INSERT INTO usage_streams (id, environment, processor, processor_customer_id, meter_event_name)
                SELECT ${streamId}, s.environment, s.processor, s.processor_customer_id, s.meter_event_name FROM active s
                ON CONFLICT (id) DO NOTHING
              ), recorded AS (
                INSERT INTO usage_records (id, organization_id, environment, subscription_id, identifier, quantity, timestamp,
                  processor, processor_customer_id, meter_event_name, differing_retries, last_differing_retry_at, created_at)
                SELECT ${u.id}::uuid, ${tenant.organizationId}::uuid, ${tenant.environment}, ${u.subscription_id}::uuid,
                  ${u.identifier}, ${u.quantity}::bigint, ${u.timestamp}::timestamptz, s.processor, s.processor_customer_id,
                  s.meter_event_name, 0, NULL, ${u.created_at}::timestamptz
                FROM active s
                ON CONFLICT (subscription_id, identifier) DO NOTHING
                RETURNING id, created_at
              ), forwarding AS (
                INSERT INTO usage_forwarding (usage_id, stream_id, status, attempts, next_attempt_at, updated_at)
                SELECT r.id, ${streamId}, 'pending', 0, r.created_at, r.created_at FROM recorded r, active s
                RETURNING usage_id
              )
              SELECT s.status, EXISTS (SELECT 1 FROM forwarding) AS recorded FROM s`).pipe(
                Effect.map((rows): RecordOutcome => {
                  const [row] = rows
                  return row === undefined
                    ? { _tag: "NoSubscription" }
                    : row.status !== "active"
                    ? { _tag: "NotActive", status: row.status }
                    : row.recorded
                    ? { _tag: "Recorded" }
                    : { _tag: "AlreadyRecorded" }
                })
              )
          },
        findByIdentifier: (tenant, subscriptionId, identifier) =>
          usage.find(tenant, [sql`subscription_id = ${subscriptionId}`, sql`identifier = ${identifier}`]),
        noteDifferingRetry: (tenant, id, at) =>
          orDie(sql`UPDATE usage_records SET differing_retries = differing_retries + 1, last_differing_retry_at = ${at}
            WHERE ${usage.where(tenant, [sql`id = ${id}`])}`).pipe(Effect.asVoid),
        find: (tenant, id) => records.findById(tenant, id),
        list: (tenant, subscriptionId, filter, page) =>
          records.page(tenant, [
            sql`subscription_id = ${subscriptionId}`,
            filter.forwarding_status === undefined ? sql`TRUE` : sql`forwarding_status = ${filter.forwarding_status}`
          ], page)
      })
    })
  )
}
