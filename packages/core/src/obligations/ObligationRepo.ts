import { Context, Effect, flow, Layer, type Option, Schema, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { NullableTimestamp, Timestamp } from "../shared/columns.ts"
import type { Conflict } from "../shared/errors.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie, uniqueAsConflict } from "../shared/sql.ts"
import { filterConditions, type FindOptions, table, tenantTable } from "../shared/tables.ts"
import { Environment, type Tenant, type TenantScoped } from "../shared/tenant.ts"
import {
  type NoticeKind,
  type ObligationBucket,
  ObligationFilter,
  type ObligationId,
  ObligationRecord,
  readOnlyFields,
  StoredObligation
} from "./model.ts"

export const obligationConflicts = {
  contract_obligations_one_successor: "This obligation already has a next obligation that is not cancelled"
}

/** A stored obligation: the record with the names read with it, its instants as timestamptz. */
export const ObligationRow = StoredObligation.mapFields(Struct.assign({
  completed_at: NullableTimestamp,
  cancelled_at: NullableTimestamp,
  reminder_sent_at: NullableTimestamp,
  overdue_notified_at: NullableTimestamp,
  escalated_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp
}))

/** What a claim returns of each row: claims span organizations, so the row carries its tenant. */
const ClaimedRow = ObligationRecord.mapFields(flow(
  Struct.pick(["id", "due_date", "assignee_user_id"]),
  Struct.assign({ organization_id: Schema.String, environment: Environment })
))

/** An obligation whose notice the caller has just claimed, inside its transaction. */
export interface ClaimedNotice {
  readonly tenant: Tenant
  readonly obligationId: ObligationId
  readonly dueDate: string
  readonly assigneeUserId: string | null
}

export interface ClaimScope {
  readonly timeZone: string
  readonly today: string
  readonly at: string
  readonly limit: number
  readonly organizationId?: string | undefined
}

/**
 * Storage port for contract obligations.
 *
 * `today` is the organization's calendar date (YYYY-MM-DD), computed by the
 * caller from the clock and the organization's time zone; the bucket filter is
 * applied by the store with it, never after loading rows.
 *
 * `claim` marks up to `limit` pending obligations of the organizations in
 * `timeZone` (or of the one organization given) that are due the notice
 * `kind` on `today` and not yet marked, and returns them. Each obligation is claimed by exactly one caller, however
 * many run at once; the caller sends the notices in the same transaction.
 */
export class ObligationRepo extends Context.Service<ObligationRepo, TenantScoped<{
  readonly insert: (tenant: Tenant, obligation: ObligationRecord) => Effect.Effect<void, Conflict>
  readonly update: (tenant: Tenant, obligation: ObligationRecord) => Effect.Effect<void, Conflict>
  /** With `forUpdate`, the row stays locked until the surrounding transaction ends. */
  readonly find: (tenant: Tenant, id: string, options?: FindOptions) => Effect.Effect<Option.Option<StoredObligation>>
  readonly list: (tenant: Tenant, filter: ObligationFilter, today: string, page: PageRequest) => Effect.Effect<Page<StoredObligation>>
  /** Time zones of the organizations (or of the one given) that have at least one pending obligation. */
  readonly timeZonesWithPending: (organizationId?: string | undefined) => Effect.Effect<ReadonlyArray<string>>
  readonly claim: (kind: NoticeKind, scope: ClaimScope) => Effect.Effect<ReadonlyArray<ClaimedNotice>>
}, /** The monitor's: one pass finds and claims due notices across every organization (or the one given). */
  "timeZonesWithPending" | "claim">>()("@opsplatform/core/obligations/ObligationRepo") {
  static readonly layerSql: Layer.Layer<ObligationRepo, never, SqlClient.SqlClient> = Layer.effect(
    ObligationRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const conflicts = uniqueAsConflict(obligationConflicts)
      const obligations = tenantTable(sql, {
        name: "contract_obligations",
        row: ObligationRow,
        // Names and the successor are read with the row, so they are never stale.
        select: (sql) =>
          sql`*,
            (SELECT c.name FROM contracts c WHERE c.id = contract_obligations.contract_id) AS contract_name,
            (SELECT u.name FROM users u WHERE u.id = contract_obligations.assignee_user_id) AS assignee_name,
            (SELECT n.id FROM contract_obligations n
              WHERE n.previous_obligation_id = contract_obligations.id AND n.status <> 'cancelled') AS next_obligation_id`,
        readOnly: readOnlyFields,
        // An obligation stays with its contract and its predecessor (ObligationUpdate refuses contract_id).
        fixed: ["contract_id", "previous_obligation_id", "created_at"]
      })
      const claimed = table(sql, { name: "contract_obligations", row: ClaimedRow })

      /** The bucket as a predicate: the SQL twin of `deriveBucket`. */
      const inBucket = (bucket: ObligationBucket, today: string) => {
        switch (bucket) {
          case "done":
            return sql`status <> 'pending'`
          case "overdue":
            return sql`status = 'pending' AND due_date < ${today}::date`
          case "due_soon":
            return sql`status = 'pending' AND due_date >= ${today}::date AND due_date - remind_days_before <= ${today}::date`
          case "upcoming":
            return sql`status = 'pending' AND due_date - remind_days_before > ${today}::date`
        }
      }

      /** Which pending obligations are due each notice on `today`, and the marker that records it. */
      const notices = (kind: NoticeKind, today: string) => {
        switch (kind) {
          case "reminder":
            return {
              marker: sql`reminder_sent_at`,
              due: sql`co.reminder_sent_at IS NULL AND co.due_date >= ${today}::date
                AND co.due_date - co.remind_days_before <= ${today}::date`
            }
          case "overdue":
            return { marker: sql`overdue_notified_at`, due: sql`co.overdue_notified_at IS NULL AND co.due_date < ${today}::date` }
          case "escalation":
            // Never before the overdue notice: an escalation follows it, in this run or a later one.
            return {
              marker: sql`escalated_at`,
              due: sql`co.escalated_at IS NULL AND co.overdue_notified_at IS NOT NULL AND co.due_date < ${today}::date
                AND co.due_date + o.escalation_delay_days <= ${today}::date`
            }
        }
      }

      // A write takes the record; the table encodes whole rows and drops the read-only fields, so these only fill the row.
      const asRow = (o: ObligationRecord) => ({ ...o, contract_name: "", assignee_name: null, next_obligation_id: null })

      return ObligationRepo.of({
        insert: (tenant, o) => conflicts(obligations.insert(tenant, asRow(o))),
        update: (tenant, o) => conflicts(obligations.update(tenant, asRow(o))).pipe(Effect.asVoid),
        find: (tenant, id, options) => obligations.findById(tenant, id, options),
        list: (tenant, f, today, page) =>
          obligations.page(tenant, filterConditions(sql, ObligationFilter, f, { bucket: (b) => inBucket(b, today) }), page),
        timeZonesWithPending: (organizationId) =>
          orDie(sql<{ readonly time_zone: string }>`SELECT DISTINCT o.time_zone FROM organizations o
            WHERE ${sql.and([
              ...(organizationId === undefined ? [] : [sql`o.id = ${organizationId}`]),
              sql`EXISTS (SELECT 1 FROM contract_obligations co WHERE co.organization_id = o.id AND co.status = 'pending')`
            ])}
            ORDER BY o.time_zone`).pipe(Effect.map((rows) => rows.map((r) => r.time_zone))),
        claim: (kind, { at, limit, organizationId, timeZone, today }) => {
          const { due, marker } = notices(kind, today)
          // SKIP LOCKED: rows another process is claiming (or a request is changing) are left for it or the next run.
          return claimed.all(sql`WITH claimed AS (UPDATE contract_obligations SET ${marker} = ${at}
            WHERE id IN (
              SELECT co.id FROM contract_obligations co JOIN organizations o ON o.id = co.organization_id
              WHERE ${sql.and([
                sql`o.time_zone = ${timeZone}`,
                sql`co.status = 'pending'`,
                due,
                ...(organizationId === undefined ? [] : [sql`co.organization_id = ${organizationId}`])
              ])}
              ORDER BY co.due_date, co.id
              LIMIT ${limit}
              FOR UPDATE OF co SKIP LOCKED)
            RETURNING id, organization_id, environment, due_date, assignee_user_id)
            SELECT * FROM claimed ORDER BY due_date, id`).pipe(
            Effect.map((rows) =>
              rows.map((r): ClaimedNotice => ({
                tenant: { organizationId: r.organization_id, environment: r.environment },
                obligationId: r.id,
                dueDate: r.due_date,
                assigneeUserId: r.assignee_user_id
              }))
            )
          )
        }
      })
    })
  )
}
