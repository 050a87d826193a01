import { Context, Effect, Layer, type Option, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { Timestamp } from "../shared/columns.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie, uniqueAsConflict } from "../shared/sql.ts"
import { filterConditions, tenantTable } from "../shared/tables.ts"
import type { BatchWrites, Tenant, TenantScoped } from "../shared/tenant.ts"
import { Expense, ExpenseFilter, ReferencedExpense } from "./model.ts"

export const expenseConflicts = {
  expenses_external_ref_unique: "Another expense already has this external reference"
}

/** A stored expense: the resource, its timestamps as timestamptz (the amount reads back as a two-decimal numeric). */
const ExpenseRow = Expense.mapFields(Struct.assign({ created_at: Timestamp, updated_at: Timestamp }))

/** A stored expense with its external reference. */
const ReferencedExpenseRow = ReferencedExpense.mapFields(Struct.assign({ created_at: Timestamp, updated_at: Timestamp }))

/**
 * Storage port for expenses. An expense may carry an external reference
 * (`ReferencedExpense`), unique in an organization environment; `insert` and
 * `update` leave it as it is, the batch writes set it.
 */
export class ExpenseRepo extends Context.Service<ExpenseRepo, TenantScoped<BatchWrites<ReferencedExpense> & {
  readonly insert: (tenant: Tenant, expense: Expense) => Effect.Effect<void>
  readonly update: (tenant: Tenant, expense: Expense) => Effect.Effect<void>
  readonly find: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<Expense>>
  readonly list: (tenant: Tenant, filter: ExpenseFilter, page: PageRequest) => Effect.Effect<Page<Expense>>
  /** The tenant's expenses with any of these external references. */
  readonly findByExternalRefs: (tenant: Tenant, refs: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<ReferencedExpense>>
}>>()("@opsplatform/core/expenses/ExpenseRepo") {
  static readonly layerSql: Layer.Layer<ExpenseRepo, never, SqlClient.SqlClient> = Layer.effect(
    ExpenseRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const conflicts = uniqueAsConflict(expenseConflicts)
      const expenses = tenantTable(sql, { name: "expenses", row: ExpenseRow })
      const referenced = tenantTable(sql, { name: "expenses", row: ReferencedExpenseRow, fixed: ["created_at"] })
      return ExpenseRepo.of({
        insert: (tenant, e) => orDie(expenses.insert(tenant, e)),
        update: (tenant, e) => orDie(expenses.update(tenant, e)).pipe(Effect.asVoid),
        find: (tenant, id) => expenses.findById(tenant, id),
        list: (tenant, f, page) =>
          expenses.page(tenant, filterConditions(sql, ExpenseFilter, f), page),
        insertAll: (tenant, list) => conflicts(referenced.insertAll(tenant, list)),
        lockAll: (tenant, ids) => referenced.findByIds(tenant, ids, { forUpdate: true }),
        removeAll: (tenant, ids) => ids.length === 0 ? Effect.void : Effect.asVoid(referenced.remove(tenant, [sql.in("id", ids)])),
        // One JSON parameter, however many references; the condition is the unique index's.
        findByExternalRefs: (tenant, refs) =>
          refs.length === 0 ? Effect.succeed([]) : referenced.findAll(tenant, [
            sql`external_ref IN (SELECT k FROM jsonb_array_elements_text(${JSON.stringify(refs)}::jsonb) AS k)`
          ])
      })
    })
  )
}
