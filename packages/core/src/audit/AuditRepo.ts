import { Context, Effect, Layer, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { Json, Timestamp } from "../shared/columns.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie } from "../shared/sql.ts"
import { filterConditions, tenantTable } from "../shared/tables.ts"
import type { Tenant, TenantScoped } from "../shared/tenant.ts"
import { AuditEvent, AuditFilter } from "./model.ts"

export const AuditEventRow = AuditEvent.mapFields(Struct.assign({
  details: Json(AuditEvent.fields.details),
  created_at: Timestamp
}))

/** Storage port of the audit log: append-only, read newest first. */
export class AuditRepo extends Context.Service<AuditRepo, TenantScoped<{
  readonly append: (tenant: Tenant, event: AuditEvent) => Effect.Effect<void>
  readonly list: (tenant: Tenant, filter: AuditFilter, page: PageRequest) => Effect.Effect<Page<AuditEvent>>
}>>()("@opsplatform/core/audit/AuditRepo") {
  static readonly layerSql: Layer.Layer<AuditRepo, never, SqlClient.SqlClient> = Layer.effect(
    AuditRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const events = tenantTable(sql, { name: "audit_events", row: AuditEventRow })
      return AuditRepo.of({
        append: (tenant, event) => orDie(events.insert(tenant, event)),
        list: (tenant, f, page) =>
          events.page(tenant, filterConditions(sql, AuditFilter, f), page)
      })
    })
  )
}

