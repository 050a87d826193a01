import { Effect, Layer, Option } from "effect"
import { courtConflicts, CourtRepo } from "@opsplatform/core/court/CourtRepo"
import { type CourtCase, CourtCaseFilter, type Hearing } from "@opsplatform/core/court/model"
import { Conflict } from "@opsplatform/core/shared/errors"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { MemoryStore } from "./MemoryStore.ts"
import { filterPredicates, memoryTenantTable } from "./rows.ts"

/** The in-memory twin of `CourtRepo.layerSql`. */
export const CourtRepoMemory: Layer.Layer<CourtRepo, never, MemoryStore> = Layer.effect(
  CourtRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const cases = memoryTenantTable<CourtCase>(store, "court_cases")
    const hearings = memoryTenantTable<Hearing>(store, "court_hearings")
    // The unique index of the SQL schema: one case per file number in a tenant.
    const check = (tenant: Tenant, c: CourtCase) =>
      cases.filter(tenant, (o) => o.id !== c.id && o.number === c.number).length > 0
        ? Effect.fail(new Conflict({ reason: courtConflicts.court_cases_number_unique }))
        : Effect.void
    const hearingOf = (tenant: Tenant, caseId: string, hearingId: string) =>
      Option.filter(hearings.find(tenant, hearingId), (h) => h.case_id === caseId)
    return CourtRepo.of({
      insert: (tenant, c) => Effect.andThen(check(tenant, c), Effect.sync(() => cases.insert(tenant, c))),
      update: (tenant, c) =>
        Effect.andThen(
          check(tenant, c),
          Effect.sync(() => {
            for (const current of Option.toArray(cases.find(tenant, c.id))) cases.update(tenant, { ...c, created_at: current.created_at })
          })
        ),
      find: (tenant, id) => Effect.sync(() => cases.find(tenant, id)),
      list: (tenant, f, page) => Effect.sync(() => cases.page(tenant, filterPredicates(CourtCaseFilter, f), page)),
      remove: (tenant, id) =>
        Effect.sync(() => {
          if (!cases.remove(tenant, id)) return false
          // ON DELETE CASCADE, as the hearings' foreign key.
          for (const h of hearings.filter(tenant, (h) => h.case_id === id)) hearings.remove(tenant, h.id)
          return true
        }),
      insertHearing: (tenant, h) => Effect.sync(() => hearings.insert(tenant, h)),
      updateHearing: (tenant, h) =>
        Effect.sync(() => {
          for (const current of Option.toArray(hearingOf(tenant, h.case_id, h.id))) {
            hearings.update(tenant, { ...h, case_id: current.case_id, created_at: current.created_at })
          }
        }),
      findHearing: (tenant, caseId, hearingId) => Effect.sync(() => hearingOf(tenant, caseId, hearingId)),
      listHearings: (tenant, caseId, page) => Effect.sync(() => hearings.page(tenant, [(h) => h.case_id === caseId], page)),
      removeHearing: (tenant, caseId, hearingId) =>
        Effect.sync(() => Option.isSome(hearingOf(tenant, caseId, hearingId)) && hearings.remove(tenant, hearingId))
    })
  })
)
