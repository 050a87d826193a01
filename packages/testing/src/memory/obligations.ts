import { Effect, Layer, Option } from "effect"
import { ContractRepo } from "@opsplatform/core/contracts/ContractRepo"
import type { Contract } from "@opsplatform/core/contracts/model"
import type { ObligationRecord, StoredObligation } from "@opsplatform/core/obligations/model"
import { type ObligationNotice, Notifier } from "@opsplatform/core/obligations/Notifier"
import { type ClaimedNotice, obligationConflicts, ObligationRepo } from "@opsplatform/core/obligations/ObligationRepo"
import { deriveBucket, noticesDue, type NoticeKind } from "@opsplatform/core/obligations/rules"
import { Conflict } from "@opsplatform/core/shared/errors"
import { pageFromArray } from "@opsplatform/core/shared/pagination"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import type { Organization, User } from "@opsplatform/core/tenancy/model"
import { MemoryStore } from "./MemoryStore.ts"
import { inTenant, keyOf, type Scoped } from "./rows.ts"

const scoped = <A>(tenant: Tenant, a: A): Scoped<A> => ({
  ...a,
  organization_id: tenant.organizationId,
  environment: tenant.environment
})

export const ContractRepoMemory: Layer.Layer<ContractRepo, never, MemoryStore> = Layer.effect(
  ContractRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const rows = store.table<Scoped<Contract>>("contracts")
    const plain = ({ environment: _e, organization_id: _o, ...c }: Scoped<Contract>): Contract => c
    return ContractRepo.of({
      insert: (tenant, c) => Effect.sync(() => void rows.set(c.id, scoped(tenant, c))),
      update: (tenant, c) =>
        Effect.sync(() => {
          const current = rows.get(c.id)
          if (current && inTenant(tenant)(current)) rows.set(c.id, scoped(tenant, c))
        }),
      find: (tenant, id) =>
        Effect.sync(() => Option.map(Option.filter(Option.fromNullishOr(rows.get(id)), inTenant(tenant)), plain)),
      list: (tenant, page) =>
        Effect.sync(() => pageFromArray(page, [...rows.values()].filter(inTenant(tenant)).map(plain), keyOf))
    })
  })
)

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
    const rows = store.table<Scoped<ObligationRecord>>("contract_obligations")
    const contracts = store.table<Scoped<Contract>>("contracts")
    const users = store.table<User>("users")
    const orgs = store.table<Organization>("organizations")

    const withNames = (row: Scoped<ObligationRecord>): StoredObligation => {
      const { environment: _e, organization_id: _o, ...o } = row
      const next = [...rows.values()].find((n) => n.previous_obligation_id === o.id && n.status !== "cancelled")
      return {
        ...o,
        contract_name: contracts.get(o.contract_id)?.name ?? "",
        assignee_name: o.assignee_user_id === null ? null : users.get(o.assignee_user_id)?.name ?? null,
        next_obligation_id: next?.id ?? null
      }
    }
    // The same guarantee as the partial unique index of the SQL schema.
    const checkSuccessor = (o: ObligationRecord) =>
      o.previous_obligation_id !== null && o.status !== "cancelled" &&
        [...rows.values()].some((n) =>
          n.id !== o.id && n.previous_obligation_id === o.previous_obligation_id && n.status !== "cancelled"
        )
        ? Effect.fail(new Conflict({ reason: obligationConflicts.contract_obligations_one_successor }))
        : Effect.void

    return ObligationRepo.of({
      insert: (tenant, o) => Effect.andThen(checkSuccessor(o), Effect.sync(() => void rows.set(o.id, scoped(tenant, o)))),
      update: (tenant, o) =>
        Effect.andThen(
          checkSuccessor(o),
          Effect.sync(() => {
            const current = rows.get(o.id)
            if (current && inTenant(tenant)(current)) rows.set(o.id, scoped(tenant, o))
          })
        ),
      find: (tenant, id) =>
        Effect.sync(() => Option.map(Option.filter(Option.fromNullishOr(rows.get(id)), inTenant(tenant)), withNames)),
      list: (tenant, f, today, page) =>
        Effect.sync(() =>
          pageFromArray(
            page,
            [...rows.values()].filter((o) =>
              inTenant(tenant)(o) &&
              (f.contract_id === undefined || o.contract_id === f.contract_id) &&
              (f.status === undefined || o.status === f.status) &&
              (f.bucket === undefined || deriveBucket(o, today) === f.bucket) &&
              (f.type === undefined || o.type === f.type) &&
              (f.obligor === undefined || o.obligor === f.obligor) &&
              (f.assignee_user_id === undefined || o.assignee_user_id === f.assignee_user_id) &&
              (f.due_from === undefined || o.due_date >= f.due_from) &&
              (f.due_to === undefined || o.due_date <= f.due_to)
            ).map(withNames),
            keyOf
          )
        ),
      timeZonesWithPending: (organizationId) =>
        Effect.sync(() =>
          [
            ...new Set(
              [...rows.values()].filter((o) =>
                o.status === "pending" && (organizationId === undefined || o.organization_id === organizationId)
              ).map((o) => orgs.get(o.organization_id)!.time_zone)
            )
          ].sort()
        ),
      claim: (kind, { at, limit, organizationId, timeZone, today }) =>
        Effect.sync(() => {
          const marker = markers[kind]
          const due = [...rows.values()].filter((o) => {
            const org = orgs.get(o.organization_id)!
            return org.time_zone === timeZone && o[marker] === null &&
              (organizationId === undefined || o.organization_id === organizationId) &&
              (kind !== "escalation" || o.overdue_notified_at !== null) &&
              noticesDue(o, today, org.escalation_delay_days).includes(kind)
          }).sort((a, b) => a.due_date === b.due_date ? (a.id < b.id ? -1 : 1) : a.due_date < b.due_date ? -1 : 1)
            .slice(0, limit)
          return due.map((o): ClaimedNotice => {
            rows.set(o.id, { ...o, [marker]: at })
            return {
              tenant: { organizationId: o.organization_id, environment: o.environment },
              obligationId: o.id,
              dueDate: o.due_date,
              assigneeUserId: o.assignee_user_id
            }
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
