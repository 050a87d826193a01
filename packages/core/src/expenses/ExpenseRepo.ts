import { Context, Effect, Layer, type Option, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { Timestamp } from "../shared/columns.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie } from "../shared/sql.ts"
import { filterConditions, tenantTable } from "../shared/tables.ts"
import type { Tenant, TenantScoped } from "../shared/tenant.ts"
import { Expense, ExpenseFilter } from "./model.ts"

/** A stored expense: the resource, its timestamps as timestamptz (the amount reads back as a two-decimal numeric). */
export const ExpenseRow = Expense.mapFields(Struct.assign({ created_at: Timestamp, updated_at: Timestamp }))

/** Storage port for expenses. */
export class ExpenseRepo extends Context.Service<ExpenseRepo, TenantScoped<{
  readonly insert: (tenant: Tenant, expense: Expense) => Effect.Effect<void>
  readonly update: (tenant: Tenant, expense: Expense) => Effect.Effect<void>
  readonly find: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<Expense>>
  readonly list: (tenant: Tenant, filter: ExpenseFilter, page: PageRequest) => Effect.Effect<Page<Expense>>
}>>()("@opsplatform/core/expenses/ExpenseRepo") {
  static readonly layerSql: Layer.Layer<ExpenseRepo, never, SqlClient.SqlClient> = Layer.effect(
    ExpenseRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const expenses = tenantTable(sql, { name: "expenses", row: ExpenseRow })
      return ExpenseRepo.of({
        insert: (tenant, e) => orDie(expenses.insert(tenant, e)),
        update: (tenant, e) => orDie(expenses.update(tenant, e)).pipe(Effect.asVoid),
        find: (tenant, id) => expenses.findById(tenant, id),
        list: (tenant, f, page) =>
          expenses.page(tenant, filterConditions(sql, ExpenseFilter, f), page)
      })
    })
  )
}
