import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { orDie } from "../shared/sql.ts"
import type { Tenant } from "../shared/tenant.ts"
import { toDateString, toIso } from "../shared/time.ts"
import type { NoticeKind } from "./rules.ts"

/** One notice about one obligation: what the monitor sends. */
export interface ObligationNotice {
  readonly id: string
  readonly tenant: Tenant
  readonly kind: NoticeKind
  readonly obligationId: string
  /** The due date the notice is about (a changed due date gets its own notices). */
  readonly dueDate: string
  /** The assignee, when the obligation has one. */
  readonly recipientUserId: string | null
  readonly createdAt: string
}

const storedKind = (kind: NoticeKind) => `contract_obligation.${kind}`
const noticeKind = (stored: string): NoticeKind => stored.slice("contract_obligation.".length) as NoticeKind

/**
 * Where obligation notices go. `notify` runs inside the transaction that
 * claims the notice, so a notice exists exactly when its claim does. The SQL
 * layer writes a `notifications` row and, once committed, a log line with ids
 * only (never a title, a name or an email).
 */
export class Notifier extends Context.Service<Notifier, {
  /** Sends the notices of one claim, in one write where the store allows it. */
  readonly notify: (notices: ReadonlyArray<ObligationNotice>) => Effect.Effect<void>
  /** The notices sent about an obligation, oldest first (for one instant: reminder, overdue, escalation). */
  readonly sentFor: (tenant: Tenant, obligationId: string) => Effect.Effect<ReadonlyArray<ObligationNotice>>
}>()("@opsplatform/core/obligations/Notifier") {
  static readonly layerSql: Layer.Layer<Notifier, never, SqlClient.SqlClient> = Layer.effect(
    Notifier,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return Notifier.of({
        notify: Effect.fn("Notifier.notify")(function*(notices) {
          const [first, ...rest] = notices.map((n) => ({
            id: n.id,
            organization_id: n.tenant.organizationId,
            environment: n.tenant.environment,
            kind: storedKind(n.kind),
            subject_id: n.obligationId,
            recipient_user_id: n.recipientUserId,
            due_date: n.dueDate,
            created_at: n.createdAt
          }))
          if (first === undefined) return
          yield* orDie(sql`INSERT INTO notifications ${sql.insert([first, ...rest])}`)
          yield* sql.afterCommit(Effect.forEach(notices, (n) =>
            Effect.logInfo("obligation notice").pipe(Effect.annotateLogs({
              notification_id: n.id,
              kind: storedKind(n.kind),
              obligation_id: n.obligationId,
              organization_id: n.tenant.organizationId,
              environment: n.tenant.environment
            })), { discard: true }))
        }),
        sentFor: (tenant, obligationId) =>
          orDie(sql`SELECT * FROM notifications
            WHERE subject_id = ${obligationId} AND organization_id = ${tenant.organizationId}
              AND environment = ${tenant.environment} AND kind LIKE 'contract_obligation.%'
            ORDER BY created_at,
              CASE kind WHEN 'contract_obligation.reminder' THEN 0 WHEN 'contract_obligation.overdue' THEN 1 ELSE 2 END,
              id`).pipe(
            Effect.map((rows) =>
              rows.map((r: any): ObligationNotice => ({
                id: r.id,
                tenant,
                kind: noticeKind(r.kind),
                obligationId: r.subject_id,
                dueDate: toDateString(r.due_date),
                recipientUserId: r.recipient_user_id,
                createdAt: toIso(r.created_at)
              }))
            )
          )
      })
    })
  )
}
