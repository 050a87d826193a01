import { Array as Arr, Context, Effect, Layer, Schema, SchemaTransformation } from "effect"
import { SqlClient } from "effect/sql"
import { Timestamp } from "../shared/columns.ts"
import { orDie } from "../shared/sql.ts"
import { table, tenantTable } from "../shared/tables.ts"
import type { Tenant, TenantScoped } from "../shared/tenant.ts"
import { NoticeKind, ObligationId } from "./model.ts"

/** One notice about one obligation: what the monitor sends. */
export interface ObligationNotice {
  readonly id: string
  readonly tenant: Tenant
  readonly kind: NoticeKind
  readonly obligationId: ObligationId
  /** The due date the notice is about (a changed due date gets its own notices). */
  readonly dueDate: string
  /** The assignee, when the obligation has one. */
  readonly recipientUserId: string | null
  readonly createdAt: string
}

const KIND_PREFIX = "contract_obligation."
const storedKind = (kind: NoticeKind) => `${KIND_PREFIX}${kind}`

/** `notifications` holds notices about other subjects too: the stored kind names the subject ("contract_obligation.reminder"). */
const StoredKind = Schema.String.pipe(Schema.decodeTo(
  NoticeKind,
  SchemaTransformation.transform({
    // The target schema checks the kind that is left.
    decode: (stored: string) => stored.slice(KIND_PREFIX.length) as NoticeKind,
    encode: storedKind
  })
))

/** A notice as stored; its tenant is the row's tenant columns. */
const NotificationRow = Schema.Struct({
  id: Schema.String,
  kind: StoredKind,
  subject_id: ObligationId,
  recipient_user_id: Schema.NullOr(Schema.String),
  due_date: Schema.String,
  created_at: Timestamp
})
type NotificationRow = typeof NotificationRow.Type

const rowOf = (n: ObligationNotice): NotificationRow => ({
  id: n.id,
  kind: n.kind,
  subject_id: n.obligationId,
  recipient_user_id: n.recipientUserId,
  due_date: n.dueDate,
  created_at: n.createdAt
})

const noticeOf = (tenant: Tenant) => (r: NotificationRow): ObligationNotice => ({
  id: r.id,
  tenant,
  kind: r.kind,
  obligationId: r.subject_id,
  dueDate: r.due_date,
  recipientUserId: r.recipient_user_id,
  createdAt: r.created_at
})

/**
 * Where obligation notices go. `notify` runs inside the transaction that
 * claims the notice, so a notice exists exactly when its claim does. The SQL
 * layer writes a `notifications` row and, once committed, a log line with ids
 * only (never a title, a name or an email).
 */
export class Notifier extends Context.Service<Notifier, TenantScoped<{
  /** Sends the notices of one claim, in one write where the store allows it. */
  readonly notify: (notices: ReadonlyArray<ObligationNotice>) => Effect.Effect<void>
  /** The notices sent about an obligation, oldest first (for one instant: reminder, overdue, escalation). */
  readonly sentFor: (tenant: Tenant, obligationId: string) => Effect.Effect<ReadonlyArray<ObligationNotice>>
}, /** The monitor's: one claim spans organizations, and each notice carries its own tenant. */
  "notify">>()("@opsplatform/core/obligations/Notifier") {
  static readonly layerSql: Layer.Layer<Notifier, never, SqlClient.SqlClient> = Layer.effect(
    Notifier,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const options = { name: "notifications", row: NotificationRow }
      const notifications = tenantTable(sql, options)
      // One claim's notices go in one INSERT, each row with its own tenant columns.
      const { columns } = table(sql, options)
      return Notifier.of({
        notify: Effect.fn("Notifier.notify")(function*(notices) {
          const rows = yield* Effect.forEach(notices, (n) =>
            Effect.map(columns(rowOf(n)), (values) => ({
              ...values,
              organization_id: n.tenant.organizationId,
              environment: n.tenant.environment
            })))
          if (!Arr.isArrayNonEmpty(rows)) return
          yield* orDie(sql`INSERT INTO ${notifications.name} ${sql.insert(rows)}`)
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
          notifications.findAll(
            tenant,
            [sql`subject_id = ${obligationId}`, sql`kind LIKE ${`${KIND_PREFIX}%`}`],
            sql`created_at,
              CASE kind WHEN ${storedKind("reminder")} THEN 0 WHEN ${storedKind("overdue")} THEN 1 ELSE 2 END,
              id`
          ).pipe(Effect.map((rows) => rows.map(noticeOf(tenant))))
      })
    })
  )
}
