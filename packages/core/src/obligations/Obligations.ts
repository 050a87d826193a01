import { Context, Effect, Layer, Option, Struct } from "effect"
import { ContractRepo } from "../contracts/ContractRepo.ts"
import { Conflict, InvalidTransition, NotFound, ValidationFailed } from "../shared/errors.ts"
import { Ids, newId } from "../shared/Ids.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import type { Tenant } from "../shared/tenant.ts"
import { nowIso } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { TenancyRepo } from "../tenancy/TenancyRepo.ts"
import {
  DEFAULT_REMIND_DAYS_BEFORE,
  type Obligation,
  type ObligationComplete,
  type ObligationCreate,
  type ObligationFilter,
  ObligationId,
  type ObligationRecord,
  type ObligationStatus,
  type ObligationUpdate,
  readOnlyFields,
  type StoredObligation
} from "./model.ts"
import { ObligationRepo } from "./ObligationRepo.ts"
import { actionTarget, anchorDayOf, canTransition, deriveBucket, hasEvidence, nextDueDate } from "./rules.ts"
import { findOr404 } from "../shared/lookup.ts"
import { organizationToday } from "../tenancy/calendar.ts"

/** The resource as shown on `today`: stored fields plus the derived bucket and evidence flag, internals left out. */
export const toObligation = (
  { recurrence_anchor_day: _anchor, reminder_sent_at: _reminded, ...o }: StoredObligation,
  today: string
): Obligation => ({ ...o, bucket: deriveBucket(o, today), has_evidence: hasEvidence(o) })

const RESOURCE = "contract obligation"

/** A new obligation, or the next of a series: not completed, not cancelled, nothing sent yet. */
const notStarted = {
  completed_at: null,
  cancelled_at: null,
  reminder_sent_at: null,
  overdue_notified_at: null,
  escalated_at: null
} as const

/** The stored columns of an obligation read with its names. */
const recordOf = (stored: StoredObligation): ObligationRecord => Struct.omit(stored, readOnlyFields)

/**
 * Contract obligations: their lifecycle (pending → completed → reopened,
 * pending → cancelled), recurrence on completion, and buckets read in the
 * organization's time zone.
 */
export class Obligations extends Context.Service<Obligations, {
  readonly create: (tenant: Tenant, input: ObligationCreate) => Effect.Effect<Obligation, NotFound>
  readonly get: (tenant: Tenant, id: string) => Effect.Effect<Obligation, NotFound>
  readonly list: (tenant: Tenant, filter: ObligationFilter, page: PageRequest) => Effect.Effect<Page<Obligation>, ValidationFailed>
  /** Changing `due_date` resets the overdue notice and the escalation; changing it or `remind_days_before` allows a new reminder. */
  readonly update: (tenant: Tenant, id: string, patch: ObligationUpdate) => Effect.Effect<Obligation, NotFound | Conflict>
  /** Completes; a recurring obligation gets its next one in the same transaction. */
  readonly complete: (tenant: Tenant, id: string, input: ObligationComplete) => Effect.Effect<Obligation, NotFound | InvalidTransition | Conflict>
  /** Back to pending; refused while the completion's next obligation exists and is not cancelled. */
  readonly reopen: (tenant: Tenant, id: string) => Effect.Effect<Obligation, NotFound | InvalidTransition | Conflict>
  readonly cancel: (tenant: Tenant, id: string) => Effect.Effect<Obligation, NotFound | InvalidTransition | Conflict>
  /** The organization's calendar date now, in its time zone. */
  readonly today: (tenant: Tenant) => Effect.Effect<string>
}>()("@opsplatform/core/obligations/Obligations") {
  static readonly layer: Layer.Layer<Obligations, never, ObligationRepo | ContractRepo | TenancyRepo | Ids | Transactor> =
    Layer.effect(
      Obligations,
      Effect.gen(function*() {
        const repo = yield* ObligationRepo
        const contracts = yield* ContractRepo
        const tenancy = yield* TenancyRepo
        const ids = yield* Ids
        const tx = yield* Transactor

        const today = (tenant: Tenant) => organizationToday(tenancy, tenant.organizationId)
        const find = (tenant: Tenant, id: string, forUpdate = false) =>
          findOr404(RESOURCE, id, (id) => repo.find(tenant, id, { forUpdate }))

        const show = (tenant: Tenant, id: string) =>
          Effect.zipWith(find(tenant, id), today(tenant), toObligation)

        const checkContract = (tenant: Tenant, id: string) =>
          contracts.find(tenant, id).pipe(
            Effect.flatMap((found) => Option.isNone(found) ? Effect.fail(new NotFound({ resource: "contract", id })) : Effect.void)
          )

        // An assignee must belong to the organization; anyone else is unknown here, like a foreign id.
        const checkAssignee = (tenant: Tenant, userId: string | null | undefined) =>
          userId === null || userId === undefined
            ? Effect.void
            : tenancy.findMember(tenant.organizationId, userId).pipe(
              Effect.flatMap((found) => Option.isNone(found) ? Effect.fail(new NotFound({ resource: "member", id: userId })) : Effect.void)
            )

        const move = (current: ObligationRecord, to: ObligationStatus) =>
          canTransition(current.status, to)
            ? Effect.void
            : Effect.fail(new InvalidTransition({ resource: RESOURCE, from: current.status, to }))

        return Obligations.of({
          today,
          create: Effect.fn("Obligations.create")(function*(tenant, input) {
            yield* checkContract(tenant, input.contract_id)
            yield* checkAssignee(tenant, input.assignee_user_id)
            const now = yield* nowIso
            const record: ObligationRecord = {
              id: yield* newId(ids, ObligationId),
              contract_id: input.contract_id,
              title: input.title.trim(),
              type: input.type,
              due_date: input.due_date,
              recurrence: input.recurrence ?? "none",
              recurrence_anchor_day: anchorDayOf(input.due_date),
              remind_days_before: input.remind_days_before ?? DEFAULT_REMIND_DAYS_BEFORE,
              status: "pending",
              obligor: input.obligor ?? "us",
              assignee_user_id: input.assignee_user_id ?? null,
              clause_label: input.clause_label ?? null,
              clause_excerpt: input.clause_excerpt ?? null,
              description: input.description ?? null,
              evidence_document_id: input.evidence_document_id ?? null,
              evidence_note: input.evidence_note ?? null,
              ...notStarted,
              previous_obligation_id: null,
              created_at: now,
              updated_at: now
            }
            yield* Effect.orDie(repo.insert(tenant, record))
            return yield* show(tenant, record.id)
          }),
          get: show,
          list: Effect.fn("Obligations.list")(function*(tenant, filter, page) {
            if (filter.due_from !== undefined && filter.due_to !== undefined && filter.due_from > filter.due_to) {
              return yield* ValidationFailed.field("due_to", "must not be before due_from")
            }
            const day = yield* today(tenant)
            const result = yield* repo.list(tenant, filter, day, page)
            return { items: result.items.map((o) => toObligation(o, day)), meta: result.meta }
          }),
          update: Effect.fn("Obligations.update")(function*(tenant, id, patch) {
            yield* tx.withTransaction(Effect.gen(function*() {
              const current = yield* find(tenant, id, true)
              if (current.status === "cancelled") {
                return yield* new Conflict({ reason: "A cancelled contract obligation cannot change" })
              }
              yield* checkAssignee(tenant, patch.assignee_user_id)
              const dueChanged = patch.due_date !== undefined && patch.due_date !== current.due_date
              const windowChanged = dueChanged ||
                (patch.remind_days_before !== undefined && patch.remind_days_before !== current.remind_days_before)
              const { contract_id: _fixed, ...fields } = patch as ObligationUpdate & { readonly contract_id?: unknown }
              const next: ObligationRecord = {
                ...recordOf(current),
                ...fields,
                title: patch.title === undefined ? current.title : patch.title.trim(),
                // The spec's rule: a new due date is a new deadline, notified afresh.
                ...(dueChanged
                  ? { overdue_notified_at: null, escalated_at: null, recurrence_anchor_day: anchorDayOf(patch.due_date!) }
                  : {}),
                ...(windowChanged ? { reminder_sent_at: null } : {}),
                updated_at: yield* nowIso
              }
              yield* repo.update(tenant, next)
            }))
            return yield* show(tenant, id)
          }),
          complete: Effect.fn("Obligations.complete")(function*(tenant, id, input) {
            yield* tx.withTransaction(Effect.gen(function*() {
              const current = yield* find(tenant, id, true)
              yield* move(current, actionTarget.complete)
              const now = yield* nowIso
              const stored = recordOf(current)
              yield* repo.update(tenant, {
                ...stored,
                ...input,
                status: "completed",
                completed_at: now,
                updated_at: now
              })
              const due = nextDueDate(current.due_date, current.recurrence, current.recurrence_anchor_day)
              if (due === undefined) return
              yield* repo.insert(tenant, {
                ...stored,
                id: yield* newId(ids, ObligationId),
                due_date: due,
                status: "pending",
                evidence_document_id: null,
                evidence_note: null,
                ...notStarted,
                previous_obligation_id: current.id,
                created_at: now,
                updated_at: now
              })
            }))
            return yield* show(tenant, id)
          }),
          reopen: Effect.fn("Obligations.reopen")(function*(tenant, id) {
            yield* tx.withTransaction(Effect.gen(function*() {
              const current = yield* find(tenant, id, true)
              yield* move(current, actionTarget.reopen)
              if (current.next_obligation_id !== null) {
                return yield* new Conflict({
                  reason: `Completing this obligation created ${current.next_obligation_id}; cancel that one before reopening this one`
                })
              }
              const stored = recordOf(current)
              yield* repo.update(tenant, { ...stored, status: "pending", completed_at: null, updated_at: yield* nowIso })
            }))
            return yield* show(tenant, id)
          }),
          cancel: Effect.fn("Obligations.cancel")(function*(tenant, id) {
            yield* tx.withTransaction(Effect.gen(function*() {
              const current = yield* find(tenant, id, true)
              yield* move(current, actionTarget.cancel)
              const now = yield* nowIso
              const stored = recordOf(current)
              yield* repo.update(tenant, { ...stored, status: "cancelled", cancelled_at: now, updated_at: now })
            }))
            return yield* show(tenant, id)
          })
        })
      })
    )
}
