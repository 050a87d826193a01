import { Clock, Context, Effect, Layer } from "effect"
import { Ids } from "../shared/Ids.ts"
import type { Environment } from "../shared/tenant.ts"
import { Transactor } from "../shared/Transactor.ts"
import { type ObligationNotice, Notifier } from "./Notifier.ts"
import { ObligationRepo } from "./ObligationRepo.ts"
import { localDate, type NoticeKind } from "./rules.ts"

/** How many notices one transaction claims and sends. */
export const MONITOR_BATCH = 200

export interface MonitorSummary {
  readonly ran_at: string
  readonly reminders: number
  readonly overdue: number
  readonly escalations: number
  readonly notices: ReadonlyArray<{
    readonly kind: NoticeKind
    readonly notification_id: string
    readonly obligation_id: string
    readonly organization_id: string
    readonly environment: Environment
    readonly due_date: string
  }>
}

export interface MonitorScope {
  readonly organizationId?: string | undefined
}

/** Overdue before escalation, so one run can send both and an escalation never comes first. */
const kinds: ReadonlyArray<NoticeKind> = ["reminder", "overdue", "escalation"]

/**
 * The obligation monitor: sends each reminder, overdue notice and escalation
 * that is due, once. "Due" is read in each organization's time zone. Each
 * notice is claimed and sent in one transaction, so any number of monitors
 * may run at once against one database and a notice is still sent exactly
 * once; a failure rolls back both the claim and the notice.
 */
export class ObligationMonitor extends Context.Service<ObligationMonitor, {
  /** One pass at the current time, over every organization or the one given. */
  readonly run: (scope?: MonitorScope) => Effect.Effect<MonitorSummary>
  /** One pass as of `epochMs`. */
  readonly runAt: (epochMs: number, scope?: MonitorScope) => Effect.Effect<MonitorSummary>
}>()("@opsplatform/core/obligations/ObligationMonitor") {
  static readonly layer: Layer.Layer<ObligationMonitor, never, ObligationRepo | Notifier | Ids | Transactor> = Layer.effect(
    ObligationMonitor,
    Effect.gen(function*() {
      const repo = yield* ObligationRepo
      const notifier = yield* Notifier
      const ids = yield* Ids
      const tx = yield* Transactor

      const runAt = Effect.fn("ObligationMonitor.run")(function*(epochMs: number, scope?: MonitorScope) {
        const organizationId = scope?.organizationId
        const at = new Date(epochMs).toISOString()
        const sent: Array<MonitorSummary["notices"][number]> = []
        for (const timeZone of yield* repo.timeZonesWithPending(organizationId)) {
          // Zones are checked when set; one the runtime no longer knows must not stop the other organizations' notices.
          const today = yield* Effect.try(() => localDate(epochMs, timeZone)).pipe(
            Effect.tapError(() => Effect.logWarning("obligation monitor skips an unknown time zone").pipe(
              Effect.annotateLogs({ time_zone: timeZone })
            )),
            Effect.option
          )
          if (today._tag === "None") continue
          for (const kind of kinds) {
            for (;;) {
              const batch = yield* tx.withTransaction(Effect.gen(function*() {
                const claimed = yield* repo.claim(kind, { timeZone, today: today.value, at, limit: MONITOR_BATCH, organizationId })
                const notices: Array<ObligationNotice> = []
                for (const c of claimed) {
                  notices.push({
                    id: yield* ids.uuid,
                    tenant: c.tenant,
                    kind,
                    obligationId: c.obligationId,
                    dueDate: c.dueDate,
                    recipientUserId: c.assigneeUserId,
                    createdAt: at
                  })
                }
                yield* notifier.notify(notices)
                return notices
              }))
              sent.push(...batch.map((n) => ({
                kind,
                notification_id: n.id,
                obligation_id: n.obligationId,
                organization_id: n.tenant.organizationId,
                environment: n.tenant.environment,
                due_date: n.dueDate
              })))
              if (batch.length < MONITOR_BATCH) break
            }
          }
        }
        return {
          ran_at: at,
          reminders: sent.filter((n) => n.kind === "reminder").length,
          overdue: sent.filter((n) => n.kind === "overdue").length,
          escalations: sent.filter((n) => n.kind === "escalation").length,
          notices: sent
        }
      })

      return ObligationMonitor.of({ runAt, run: (scope) => Effect.flatMap(Clock.currentTimeMillis, (ms) => runAt(ms, scope)) })
    })
  )
}
