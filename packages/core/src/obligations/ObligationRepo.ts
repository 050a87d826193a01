import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Conflict } from "../shared/errors.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie, uniqueAsConflict } from "../shared/sql.ts"
import { keysetPage } from "../shared/sqlPage.ts"
import type { Tenant } from "../shared/tenant.ts"
import { toIso, toIsoOrNull } from "../shared/time.ts"
import type { ObligationBucket, ObligationFilter, ObligationRecord, StoredObligation } from "./model.ts"
import type { NoticeKind } from "./rules.ts"

export const obligationConflicts = {
  contract_obligations_one_successor: "This obligation already has a next obligation that is not cancelled"
}

/** An obligation whose notice the caller has just claimed, inside its transaction. */
export interface ClaimedNotice {
  readonly tenant: Tenant
  readonly obligationId: string
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
export class ObligationRepo extends Context.Service<ObligationRepo, {
  readonly insert: (tenant: Tenant, obligation: ObligationRecord) => Effect.Effect<void, Conflict>
  readonly update: (tenant: Tenant, obligation: ObligationRecord) => Effect.Effect<void, Conflict>
  /** With `forUpdate`, the row stays locked until the surrounding transaction ends. */
  readonly find: (tenant: Tenant, id: string, options?: { readonly forUpdate?: boolean }) => Effect.Effect<Option.Option<StoredObligation>>
  readonly list: (tenant: Tenant, filter: ObligationFilter, today: string, page: PageRequest) => Effect.Effect<Page<StoredObligation>>
  /** Time zones of the organizations (or of the one given) that have at least one pending obligation. */
  readonly timeZonesWithPending: (organizationId?: string | undefined) => Effect.Effect<ReadonlyArray<string>>
  readonly claim: (kind: NoticeKind, scope: ClaimScope) => Effect.Effect<ReadonlyArray<ClaimedNotice>>
}>()("@opsplatform/core/obligations/ObligationRepo") {
  static readonly layerSql: Layer.Layer<ObligationRepo, never, SqlClient.SqlClient> = Layer.effect(
    ObligationRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const conflicts = uniqueAsConflict(obligationConflicts)
      const tenantIs = (t: Tenant) => sql`organization_id = ${t.organizationId} AND environment = ${t.environment}`

      // Names and the successor are read with the row, so they are never stale.
      const columns = sql`*, to_char(due_date, 'YYYY-MM-DD') AS due_day,
        (SELECT c.name FROM contracts c WHERE c.id = contract_obligations.contract_id) AS contract_name,
        (SELECT u.name FROM users u WHERE u.id = contract_obligations.assignee_user_id) AS assignee_name,
        (SELECT n.id FROM contract_obligations n
          WHERE n.previous_obligation_id = contract_obligations.id AND n.status <> 'cancelled') AS next_obligation_id`

      const decode = (r: any): StoredObligation => ({
        id: r.id,
        contract_id: r.contract_id,
        title: r.title,
        type: r.type,
        due_date: r.due_day,
        recurrence: r.recurrence,
        recurrence_anchor_day: Number(r.recurrence_anchor_day),
        remind_days_before: Number(r.remind_days_before),
        status: r.status,
        obligor: r.obligor,
        assignee_user_id: r.assignee_user_id,
        clause_label: r.clause_label,
        clause_excerpt: r.clause_excerpt,
        description: r.description,
        evidence_document_id: r.evidence_document_id,
        evidence_note: r.evidence_note,
        completed_at: toIsoOrNull(r.completed_at),
        cancelled_at: toIsoOrNull(r.cancelled_at),
        reminder_sent_at: toIsoOrNull(r.reminder_sent_at),
        overdue_notified_at: toIsoOrNull(r.overdue_notified_at),
        escalated_at: toIsoOrNull(r.escalated_at),
        previous_obligation_id: r.previous_obligation_id,
        created_at: toIso(r.created_at),
        updated_at: toIso(r.updated_at),
        contract_name: r.contract_name,
        assignee_name: r.assignee_name,
        next_obligation_id: r.next_obligation_id
      })

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

      const write = (tenant: Tenant, o: ObligationRecord) =>
        sql`INSERT INTO contract_obligations (id, organization_id, environment, contract_id, title, type, due_date,
            recurrence, recurrence_anchor_day, remind_days_before, status, obligor, assignee_user_id, clause_label,
            clause_excerpt, description, evidence_document_id, evidence_note, completed_at, cancelled_at,
            reminder_sent_at, overdue_notified_at, escalated_at, previous_obligation_id, created_at, updated_at)
          VALUES (${o.id}, ${tenant.organizationId}, ${tenant.environment}, ${o.contract_id}, ${o.title}, ${o.type},
            ${o.due_date}::date, ${o.recurrence}, ${o.recurrence_anchor_day}, ${o.remind_days_before}, ${o.status},
            ${o.obligor}, ${o.assignee_user_id}, ${o.clause_label}, ${o.clause_excerpt}, ${o.description},
            ${o.evidence_document_id}, ${o.evidence_note}, ${o.completed_at}, ${o.cancelled_at}, ${o.reminder_sent_at},
            ${o.overdue_notified_at}, ${o.escalated_at}, ${o.previous_obligation_id}, ${o.created_at}, ${o.updated_at})`

      return ObligationRepo.of({
        insert: (tenant, o) => conflicts(write(tenant, o)).pipe(Effect.asVoid),
        update: (tenant, o) =>
          conflicts(sql`UPDATE contract_obligations SET title = ${o.title}, type = ${o.type},
              due_date = ${o.due_date}::date, recurrence = ${o.recurrence},
              recurrence_anchor_day = ${o.recurrence_anchor_day}, remind_days_before = ${o.remind_days_before},
              status = ${o.status}, obligor = ${o.obligor}, assignee_user_id = ${o.assignee_user_id},
              clause_label = ${o.clause_label}, clause_excerpt = ${o.clause_excerpt}, description = ${o.description},
              evidence_document_id = ${o.evidence_document_id}, evidence_note = ${o.evidence_note},
              completed_at = ${o.completed_at}, cancelled_at = ${o.cancelled_at},
              reminder_sent_at = ${o.reminder_sent_at}, overdue_notified_at = ${o.overdue_notified_at},
              escalated_at = ${o.escalated_at}, updated_at = ${o.updated_at}
            WHERE id = ${o.id} AND ${tenantIs(tenant)}`).pipe(Effect.asVoid),
        find: (tenant, id, options) =>
          orDie(
            options?.forUpdate
              ? sql`SELECT ${columns} FROM contract_obligations WHERE id = ${id} AND ${tenantIs(tenant)} FOR UPDATE`
              : sql`SELECT ${columns} FROM contract_obligations WHERE id = ${id} AND ${tenantIs(tenant)}`
          ).pipe(Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), decode))),
        list: (tenant, f, today, page) =>
          keysetPage(sql, {
            table: "contract_obligations",
            select: columns,
            where: sql.and([
              tenantIs(tenant),
              f.contract_id === undefined ? sql`TRUE` : sql`contract_id = ${f.contract_id}`,
              f.status === undefined ? sql`TRUE` : sql`status = ${f.status}`,
              f.bucket === undefined ? sql`TRUE` : inBucket(f.bucket, today),
              f.type === undefined ? sql`TRUE` : sql`type = ${f.type}`,
              f.obligor === undefined ? sql`TRUE` : sql`obligor = ${f.obligor}`,
              f.assignee_user_id === undefined ? sql`TRUE` : sql`assignee_user_id = ${f.assignee_user_id}`,
              f.due_from === undefined ? sql`TRUE` : sql`due_date >= ${f.due_from}::date`,
              f.due_to === undefined ? sql`TRUE` : sql`due_date <= ${f.due_to}::date`
            ]),
            page,
            decode
          }),
        timeZonesWithPending: (organizationId) =>
          orDie(sql`SELECT DISTINCT o.time_zone FROM organizations o
            WHERE ${organizationId === undefined ? sql`TRUE` : sql`o.id = ${organizationId}`}
              AND EXISTS (SELECT 1 FROM contract_obligations co WHERE co.organization_id = o.id AND co.status = 'pending')
            ORDER BY o.time_zone`).pipe(Effect.map((rows) => rows.map((r: any) => String(r.time_zone)))),
        claim: (kind, { at, limit, organizationId, timeZone, today }) => {
          const { due, marker } = notices(kind, today)
          // SKIP LOCKED: rows another process is claiming (or a request is changing) are left for it or the next run.
          return orDie(sql`WITH claimed AS (UPDATE contract_obligations SET ${marker} = ${at}
            WHERE id IN (
              SELECT co.id FROM contract_obligations co JOIN organizations o ON o.id = co.organization_id
              WHERE o.time_zone = ${timeZone} AND co.status = 'pending' AND ${due}
                AND ${organizationId === undefined ? sql`TRUE` : sql`co.organization_id = ${organizationId}`}
              ORDER BY co.due_date, co.id
              LIMIT ${limit}
              FOR UPDATE OF co SKIP LOCKED)
            RETURNING id, organization_id, environment, due_date, assignee_user_id)
            SELECT id, organization_id, environment, to_char(due_date, 'YYYY-MM-DD') AS due_day, assignee_user_id
            FROM claimed ORDER BY due_date, id`)
            .pipe(
              Effect.map((rows) =>
                rows.map((r: any): ClaimedNotice => ({
                  tenant: { organizationId: r.organization_id, environment: r.environment },
                  obligationId: r.id,
                  dueDate: r.due_day,
                  assigneeUserId: r.assignee_user_id
                }))
              )
            )
        }
      })
    })
  )
}
