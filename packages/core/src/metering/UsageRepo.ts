import { Context, Effect, Layer, Option, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { NullableTimestamp, Numeric, Timestamp } from "../shared/columns.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { makeGroupCommit } from "../shared/groupCommit.ts"
import { orDie } from "../shared/sql.ts"
import { filterConditions, tenantTable } from "../shared/tables.ts"
import type { Tenant, TenantScoped } from "../shared/tenant.ts"
import { StoredUsage, type SubscriptionStatus, UsageFilter, UsageRecord, type UsageRecordId } from "./model.ts"
import { RecordingSettings } from "./settings.ts"

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
 * concurrency. The SQL store writes concurrent reports (outside a
 * transaction) in one statement and commit, each answered as if alone
 * (`RecordingSettings`).
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
      const records = tenantTable(sql, { name: "usage_record_view", row: UsageRecordRow })
      /**
       * The one write of a group of reports, each with its tenant: every report reads its tenant's subscription and,
       * while it is active, writes the record, its outbox row and its customer's and meter's stream — all in one
       * statement, answering each report's outcome in order. Rows are written in key order (stream id; subscription
       * and identifier), so two groups that share keys wait on each other in the same order and never deadlock; of
       * reports repeating one identifier, the first to arrive is recorded.
       */
      const recordGroup = (reports: ReadonlyArray<{ readonly tenant: Tenant; readonly usage: NewUsage }>) =>
        sql<{ readonly n: number; readonly status: SubscriptionStatus | null; readonly recorded: boolean }>`WITH input AS (
            SELECT * FROM jsonb_to_recordset(${
          JSON.stringify(reports.map(({ tenant, usage: u }, n) => ({
            n,
            id: u.id,
            organization_id: tenant.organizationId,
            environment: tenant.environment,
            subscription_id: u.subscription_id,
            identifier: u.identifier,
            quantity: u.quantity,
            timestamp: u.timestamp,
            created_at: u.created_at
          })))
        }::jsonb) AS t(n int, id uuid, organization_id uuid, environment text, subscription_id uuid, identifier text,
              quantity bigint, "timestamp" timestamptz, created_at timestamptz)
          ), s AS (
            SELECT i.*, sub.status, sub.processor, sub.processor_customer_id, sub.meter_event_name,
              -- The stream's id is its key's digest, so concurrent first reports of a customer and meter agree on it
              -- without reading each other's uncommitted rows.
              md5(sub.environment || E'\n' || sub.processor || E'\n' || sub.processor_customer_id || E'\n' ||
                sub.meter_event_name)::uuid AS stream_id
            FROM input i LEFT JOIN subscriptions sub
              ON sub.id = i.subscription_id AND sub.organization_id = i.organization_id AND sub.environment = i.environment
          ), active AS (
            SELECT * FROM s WHERE status = 'active'
          ), stream AS (
            INSERT INTO usage_streams (id, environment, processor, processor_customer_id, meter_event_name)
            SELECT DISTINCT stream_id, environment, processor, processor_customer_id, meter_event_name FROM active
            ORDER BY stream_id
            -- Any conflict, not only the id's: a report racing the stream's first insert can meet it on the key's index.
            ON CONFLICT DO NOTHING
          ), recorded AS (
            INSERT INTO usage_records (id, organization_id, environment, subscription_id, identifier, quantity, timestamp,
              processor, processor_customer_id, meter_event_name, differing_retries, last_differing_retry_at, created_at)
            SELECT id, organization_id, environment, subscription_id, identifier, quantity, "timestamp", processor,
              processor_customer_id, meter_event_name, 0, NULL, created_at
            FROM active ORDER BY subscription_id, identifier, n
            ON CONFLICT (subscription_id, identifier) DO NOTHING
            RETURNING id, created_at
          ), forwarding AS (
            INSERT INTO usage_forwarding (usage_id, stream_id, status, attempts, next_attempt_at, updated_at)
            SELECT r.id, a.stream_id, 'pending', 0, r.created_at, r.created_at FROM recorded r JOIN active a ON a.id = r.id
            RETURNING usage_id
          )
          SELECT s.n, s.status, f.usage_id IS NOT NULL AS recorded FROM s LEFT JOIN forwarding f ON f.usage_id = s.id
          ORDER BY s.n`.pipe(
          orDie,
          Effect.map((rows) =>
            rows.map((row): RecordOutcome =>
              row.status === null
                ? { _tag: "NoSubscription" }
                : row.status !== "active"
                ? { _tag: "NotActive", status: row.status }
                : row.recorded
                ? { _tag: "Recorded" }
                : { _tag: "AlreadyRecorded" }
            )
          )
        )
      const alone = (tenant: Tenant, usage: NewUsage) => Effect.map(recordGroup([{ tenant, usage }]), (outcomes) => outcomes[0]!)
      // Concurrent reports share a statement and a commit (decided: docs/decisions.md, "Usage metering").
      const settings = yield* RecordingSettings
      const grouped = settings.maxGroup > 1
        ? yield* makeGroupCommit({ run: recordGroup, maxGroup: settings.maxGroup, maxInFlight: settings.groupsInFlight })
        : undefined

      return UsageRepo.of({
        record: (tenant, u) =>
          // Inside a transaction the report is written on its connection, to commit or roll back with the rest.
          Effect.flatMap(Effect.serviceOption(sql.transactionService), (transaction) =>
            grouped === undefined || Option.isSome(transaction) ? alone(tenant, u) : grouped({ tenant, usage: u })),
        findByIdentifier: (tenant, subscriptionId, identifier) =>
          usage.find(tenant, [sql`subscription_id = ${subscriptionId}`, sql`identifier = ${identifier}`]),
        noteDifferingRetry: (tenant, id, at) =>
          orDie(sql`UPDATE usage_records SET differing_retries = differing_retries + 1, last_differing_retry_at = ${at}
            WHERE ${usage.where(tenant, [sql`id = ${id}`])}`).pipe(Effect.asVoid),
        find: (tenant, id) => records.findById(tenant, id),
        list: (tenant, subscriptionId, filter, page) =>
          records.page(tenant, [sql`subscription_id = ${subscriptionId}`, ...filterConditions(sql, UsageFilter, filter)], page)
      })
    })
  )
}
