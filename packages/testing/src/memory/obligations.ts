import { Effect, Layer, Option } from "effect"
import type { Contract } from "@opsplatform/core/contracts/model"
import { ObligationFilter, type ObligationRecord, type StoredObligation } from "@opsplatform/core/obligations/model"
import { type ObligationNotice, Notifier } from "@opsplatform/core/obligations/Notifier"
import { type ClaimedNotice, obligationConflicts, ObligationRepo } from "@opsplatform/core/obligations/ObligationRepo"
import { deriveBucket, noticesDue, type NoticeKind } from "@opsplatform/core/obligations/rules"
import { Conflict } from "@opsplatform/core/shared/errors"
import type { Organization, User } from "@opsplatform/core/tenancy/model"
import { MemoryStore } from "./MemoryStore.ts"
import { filterPredicates, memoryTenantTable } from "./rows.ts"

const markers: Record<NoticeKind, "reminder_sent_at" | "overdue_notified_at" | "escalated_at"> = {
  reminder: "reminder_sent_at",
  overdue: "overdue_notified_at",
  escalation: "escalated_at"
}

/** The in-memory twin of the SQL obligation store: the same filters, buckets and claims, from the same rules. */
export const ObligationRepoMemory: Layer.Layer<ObligationRepo, never, MemoryStore> = Layer.effect(
  ObligationRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const obligations = memoryTenantTable<ObligationRecord>(store, "contract_obligations")
    const contracts = memoryTenantTable<Contract>(store, "contracts")
    const users = store.table<User>("users")
    const orgs = store.table<Organization>("organizations")
    // Names and the successor are looked up by id across the store, as the SQL layer's subqueries do.
    const all = () => [...obligations.rows.values()]

    const withNames = (o: ObligationRecord): StoredObligation => {
      const next = all().find((n) => n.previous_obligation_id === o.id && n.status !== "cancelled")
      return {
        ...o,
        contract_name: contracts.rows.get(o.contract_id)?.name ?? "",
        assignee_name: o.assignee_user_id === null ? null : users.get(o.assignee_user_id)?.name ?? null,
        next_obligation_id: next?.id ?? null
      }
    }
    // The same guarantee as the partial unique index of the SQL schema.
    const checkSuccessor = (o: ObligationRecord) =>
      o.previous_obligation_id !== null && o.status !== "cancelled" &&
        all().some((n) => n.id !== o.id && n.previous_obligation_id === o.previous_obligation_id && n.status !== "cancelled")
        ? Effect.fail(new Conflict({ reason: obligationConflicts.contract_obligations_one_successor }))
        : Effect.void

    return ObligationRepo.of({
      insert: (tenant, o) => Effect.andThen(checkSuccessor(o), Effect.sync(() => obligations.insert(tenant, o))),
      update: (tenant, o) => Effect.andThen(checkSuccessor(o), Effect.sync(() => void obligations.update(tenant, o))),
      find: (tenant, id) => Effect.sync(() => Option.map(obligations.find(tenant, id), withNames)),
      list: (tenant, f, today, page) =>
        Effect.sync(() => {
          const found = obligations.page(
            tenant,
            filterPredicates(ObligationFilter, f, { bucket: (b) => (o: ObligationRecord) => deriveBucket(o, today) === b }),
            page
          )
          return { items: found.items.map(withNames), meta: found.meta }
        }),
      timeZonesWithPending: (organizationId) =>
        Effect.sync(() =>
          [
            ...new Set(
              all().filter((o) =>
                o.status === "pending" && (organizationId === undefined || o.organization_id === organizationId)
              ).map((o) => orgs.get(o.organization_id)!.time_zone)
            )
          ].sort()
        ),
      claim: (kind, { at, limit, organizationId, timeZone, today }) =>
        Effect.sync(() => {
          const marker = markers[kind]
          const due = all().filter((o) => {
            const org = orgs.get(o.organization_id)!
            return org.time_zone === timeZone && o[marker] === null &&
              (organizationId === undefined || o.organization_id === organizationId) &&
              (kind !== "escalation" || o.overdue_notified_at !== null) &&
              noticesDue(o, today, org.escalation_delay_days).includes(kind)
          }).sort((a, b) => a.due_date === b.due_date ? (a.id < b.id ? -1 : 1) : a.due_date < b.due_date ? -1 : 1)
            .slice(0, limit)
          return due.map((o): ClaimedNotice => {
            const tenant = { organizationId: o.organization_id, environment: o.environment }
            obligations.update(tenant, { ...o, [marker]: at })
            return { tenant, obligationId: o.id, dueDate: o.due_date, assigneeUserId: o.assignee_user_id }
          })
        })
    })
  })
)

/**
 * A Notifier that records every notice in the memory store, so a notice rolls
 * back with the transaction that claimed it. Read them with `recordedNotices`.
 */
export const NotifierRecording: Layer.Layer<Notifier, never, MemoryStore> = Layer.effect(
  Notifier,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const sent = store.table<ObligationNotice>("notifications")
    return Notifier.of({
      notify: (notices) => Effect.sync(() => notices.forEach((n) => sent.set(n.id, n))),
      sentFor: (tenant, obligationId) =>
        Effect.sync(() =>
          [...sent.values()].filter((n) =>
            n.obligationId === obligationId && n.tenant.organizationId === tenant.organizationId &&
            n.tenant.environment === tenant.environment
          )
        )
    })
  })
)

/** Every notice the recording Notifier holds, in the order sent. */
export const recordedNotices: Effect.Effect<ReadonlyArray<ObligationNotice>, never, MemoryStore> = Effect.map(
  MemoryStore,
  (store) => [...store.table<ObligationNotice>("notifications").values()]
)
