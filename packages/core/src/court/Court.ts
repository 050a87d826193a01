import { Context, Effect, Layer } from "effect"
import { courtHearingEventId, event } from "../events/catalog.ts"
import { Outbox } from "../events/Outbox.ts"
import { changedKeys } from "../shared/changes.ts"
import { type Conflict, NotFound, ValidationFailed } from "../shared/errors.ts"
import { Ids, newId } from "../shared/Ids.ts"
import { findOr404 } from "../shared/lookup.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { isUuid } from "../shared/schemas.ts"
import type { Tenant } from "../shared/tenant.ts"
import { nowIso } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { CourtRepo } from "./CourtRepo.ts"
import {
  type CourtCase,
  type CourtCaseCreate,
  type CourtCaseFilter,
  CourtCaseId,
  type CourtCaseUpdate,
  type Hearing,
  type HearingCreate,
  HearingId,
  type HearingUpdate
} from "./model.ts"
import { caseNumberIssue, normalizeCaseNumber } from "./rules.ts"

/** The case as stored: its file number normalised, its texts trimmed. */
const checked = (c: CourtCase): Effect.Effect<CourtCase, ValidationFailed> => {
  const number = normalizeCaseNumber(c.number)
  return number === undefined
    ? Effect.fail(ValidationFailed.field("number", caseNumberIssue))
    : Effect.succeed({
      ...c,
      number,
      court: c.court.trim(),
      parties: c.parties.map((p) => ({ name: p.name.trim(), role: p.role.trim() }))
    })
}

const bookkeeping: ReadonlyArray<keyof CourtCase & keyof Hearing> = ["id", "created_at", "updated_at"]

/**
 * Court cases of an organization environment and their hearings. Adding a
 * hearing writes `court_case.hearing_added` to the outbox in the same
 * transaction, with the spec's four fields only: never the parties, the
 * panel, the solution or the notes.
 */
export class Court extends Context.Service<Court, {
  readonly create: (tenant: Tenant, input: CourtCaseCreate) => Effect.Effect<CourtCase, ValidationFailed | Conflict>
  readonly get: (tenant: Tenant, id: string) => Effect.Effect<CourtCase, NotFound>
  readonly list: (tenant: Tenant, filter: CourtCaseFilter, page: PageRequest) => Effect.Effect<Page<CourtCase>>
  readonly update: (tenant: Tenant, id: string, patch: CourtCaseUpdate) => Effect.Effect<CourtCase, NotFound | ValidationFailed | Conflict>
  /** Removes the case with its hearings. */
  readonly remove: (tenant: Tenant, id: string) => Effect.Effect<void, NotFound>
  readonly addHearing: (tenant: Tenant, caseId: string, input: HearingCreate) => Effect.Effect<Hearing, NotFound>
  readonly listHearings: (tenant: Tenant, caseId: string, page: PageRequest) => Effect.Effect<Page<Hearing>, NotFound>
  readonly updateHearing: (tenant: Tenant, caseId: string, hearingId: string, patch: HearingUpdate) => Effect.Effect<Hearing, NotFound>
  readonly removeHearing: (tenant: Tenant, caseId: string, hearingId: string) => Effect.Effect<void, NotFound>
}>()("@opsplatform/core/court/Court") {
  static readonly layer: Layer.Layer<Court, never, CourtRepo | Outbox | Ids | Transactor> = Layer.effect(
    Court,
    Effect.gen(function*() {
      const repo = yield* CourtRepo
      const outbox = yield* Outbox
      const ids = yield* Ids
      const tx = yield* Transactor

      const find = (tenant: Tenant, id: string, forUpdate = false) =>
        findOr404("court case", id, (id) => repo.find(tenant, id, { forUpdate }))
      const findHearing = (tenant: Tenant, caseId: string, hearingId: string) =>
        Effect.andThen(
          find(tenant, caseId),
          findOr404("court hearing", hearingId, (id) => repo.findHearing(tenant, caseId, id))
        )

      return Court.of({
        create: Effect.fn("Court.create")(function*(tenant, input) {
          const now = yield* nowIso
          const courtCase = yield* checked({
            id: yield* newId(ids, CourtCaseId),
            number: input.number,
            court: input.court,
            subject: input.subject ?? null,
            parties: input.parties ?? [],
            panel: input.panel ?? null,
            status: input.status ?? "open",
            notes: input.notes ?? null,
            created_at: now,
            updated_at: now
          })
          yield* repo.insert(tenant, courtCase)
          return courtCase
        }),
        get: (tenant, id) => find(tenant, id),
        list: (tenant, filter, page) => repo.list(tenant, filter, page),
        update: Effect.fn("Court.update")(function*(tenant, id, patch) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            const current = yield* find(tenant, id, true)
            const next = yield* checked({ ...current, ...patch })
            if (changedKeys(current, next, bookkeeping).length === 0) return current
            const written = { ...next, updated_at: yield* nowIso }
            yield* repo.update(tenant, written)
            return written
          }))
        }),
        remove: Effect.fn("Court.remove")(function*(tenant, id) {
          const removed = isUuid(id) && (yield* repo.remove(tenant, id))
          if (!removed) return yield* new NotFound({ resource: "court case", id })
        }),
        addHearing: Effect.fn("Court.addHearing")(function*(tenant, caseId, input) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            // Locked, so a hearing never lands on a case being deleted.
            const courtCase = yield* find(tenant, caseId, true)
            const now = yield* nowIso
            const hearing: Hearing = {
              id: yield* newId(ids, HearingId),
              case_id: courtCase.id,
              hearing_date: input.hearing_date,
              court: input.court?.trim() ?? courtCase.court,
              panel: input.panel ?? null,
              solution: input.solution ?? null,
              notes: input.notes ?? null,
              created_at: now,
              updated_at: now
            }
            yield* repo.insertHearing(tenant, hearing)
            yield* outbox.publish(
              tenant,
              event("court_case.hearing_added", courtHearingEventId(hearing.id), {
                id: hearing.id,
                case_id: hearing.case_id,
                hearing_date: hearing.hearing_date,
                court: hearing.court
              })
            )
            return hearing
          }))
        }),
        listHearings: Effect.fn("Court.listHearings")(function*(tenant, caseId, page) {
          yield* find(tenant, caseId)
          return yield* repo.listHearings(tenant, caseId, page)
        }),
        updateHearing: Effect.fn("Court.updateHearing")(function*(tenant, caseId, hearingId, patch) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            const current = yield* findHearing(tenant, caseId, hearingId)
            const next: Hearing = { ...current, ...patch, court: patch.court?.trim() ?? current.court }
            if (changedKeys(current, next, bookkeeping).length === 0) return current
            const written = { ...next, updated_at: yield* nowIso }
            yield* repo.updateHearing(tenant, written)
            return written
          }))
        }),
        removeHearing: Effect.fn("Court.removeHearing")(function*(tenant, caseId, hearingId) {
          yield* find(tenant, caseId)
          const removed = isUuid(hearingId) && (yield* repo.removeHearing(tenant, caseId, hearingId))
          if (!removed) return yield* new NotFound({ resource: "court hearing", id: hearingId })
        })
      })
    })
  )
}
