import { Context, Effect, Layer, type Option, Schema, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { Json, Timestamp } from "../shared/columns.ts"
import type { Conflict } from "../shared/errors.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie, uniqueAsConflict } from "../shared/sql.ts"
import { filterConditions, type FindOptions, tenantTable } from "../shared/tables.ts"
import type { Tenant, TenantScoped } from "../shared/tenant.ts"
import { CourtCase, CourtCaseFilter, Hearing, Party } from "./model.ts"

export const courtConflicts = {
  court_cases_number_unique: "Another court case of the organization already has this file number"
}

export const CourtCaseRow = CourtCase.mapFields(Struct.assign({
  parties: Json(Schema.Array(Party)),
  created_at: Timestamp,
  updated_at: Timestamp
}))

export const HearingRow = Hearing.mapFields(Struct.assign({ created_at: Timestamp, updated_at: Timestamp }))

/**
 * Storage port for court cases and their hearings. The store guarantees one
 * case per file number in an organization environment; removing a case
 * removes its hearings.
 */
export class CourtRepo extends Context.Service<CourtRepo, TenantScoped<{
  readonly insert: (tenant: Tenant, courtCase: CourtCase) => Effect.Effect<void, Conflict>
  readonly update: (tenant: Tenant, courtCase: CourtCase) => Effect.Effect<void, Conflict>
  readonly find: (tenant: Tenant, id: string, options?: FindOptions) => Effect.Effect<Option.Option<CourtCase>>
  readonly list: (tenant: Tenant, filter: CourtCaseFilter, page: PageRequest) => Effect.Effect<Page<CourtCase>>
  /** Removes the case and its hearings; whether there was one. */
  readonly remove: (tenant: Tenant, id: string) => Effect.Effect<boolean>
  readonly insertHearing: (tenant: Tenant, hearing: Hearing) => Effect.Effect<void>
  readonly updateHearing: (tenant: Tenant, hearing: Hearing) => Effect.Effect<void>
  /** The hearing of that case, or none. */
  readonly findHearing: (tenant: Tenant, caseId: string, hearingId: string) => Effect.Effect<Option.Option<Hearing>>
  readonly listHearings: (tenant: Tenant, caseId: string, page: PageRequest) => Effect.Effect<Page<Hearing>>
  readonly removeHearing: (tenant: Tenant, caseId: string, hearingId: string) => Effect.Effect<boolean>
}>>()("@opsplatform/core/court/CourtRepo") {
  static readonly layerSql: Layer.Layer<CourtRepo, never, SqlClient.SqlClient> = Layer.effect(
    CourtRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const conflicts = uniqueAsConflict(courtConflicts)
      const cases = tenantTable(sql, { name: "court_cases", row: CourtCaseRow, fixed: ["created_at"] })
      const hearings = tenantTable(sql, { name: "court_hearings", row: HearingRow, fixed: ["case_id", "created_at"] })
      return CourtRepo.of({
        insert: (tenant, c) => conflicts(cases.insert(tenant, c)),
        update: (tenant, c) => conflicts(cases.update(tenant, c)).pipe(Effect.asVoid),
        find: (tenant, id, options) => cases.findById(tenant, id, options),
        list: (tenant, f, page) =>
          cases.page(tenant, filterConditions(sql, CourtCaseFilter, f), page),
        remove: (tenant, id) => Effect.map(cases.remove(tenant, [sql`id = ${id}`]), (n) => n > 0),
        insertHearing: (tenant, h) => orDie(hearings.insert(tenant, h)),
        updateHearing: (tenant, h) => orDie(hearings.update(tenant, h, [sql`case_id = ${h.case_id}`])).pipe(Effect.asVoid),
        findHearing: (tenant, caseId, hearingId) => hearings.find(tenant, [sql`id = ${hearingId}`, sql`case_id = ${caseId}`]),
        listHearings: (tenant, caseId, page) => hearings.page(tenant, [sql`case_id = ${caseId}`], page),
        removeHearing: (tenant, caseId, hearingId) =>
          Effect.map(hearings.remove(tenant, [sql`id = ${hearingId}`, sql`case_id = ${caseId}`]), (n) => n > 0)
      })
    })
  )
}
