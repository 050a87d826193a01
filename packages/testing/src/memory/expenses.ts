import { Effect, Layer, Option } from "effect"
import { expenseConflicts, ExpenseRepo } from "@opsplatform/core/expenses/ExpenseRepo"
import { type Expense, ExpenseFilter, type ReferencedExpense } from "@opsplatform/core/expenses/model"
import { Conflict } from "@opsplatform/core/shared/errors"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { MemoryStore } from "./MemoryStore.ts"
import { filterPredicates, memoryTenantTable, sortedById } from "./rows.ts"

export const ExpenseRepoMemory: Layer.Layer<ExpenseRepo, never, MemoryStore> = Layer.effect(
  ExpenseRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const expenses = memoryTenantTable<Expense>(store, "expenses")
    // The external reference beside the expense, as the SQL table's extra column: never part of the expense read back.
    const externalRefs = store.table<string>("expense_external_refs")
    const plain = (e: Expense): Expense => {
      if (!("external_ref" in e)) return e
      const { external_ref: _, ...expense } = e as ReferencedExpense
      return expense
    }
    const referenced = (e: Expense): ReferencedExpense => ({ ...e, external_ref: externalRefs.get(e.id) ?? null })
    // The unique index of the SQL schema: one expense per external reference in a tenant.
    const insert = (tenant: Tenant, e: ReferencedExpense) =>
      e.external_ref !== null && expenses.filter(tenant, (o) => externalRefs.get(o.id) === e.external_ref).length > 0
        ? Effect.fail(new Conflict({ reason: expenseConflicts.expenses_external_ref_unique }))
        : Effect.sync(() => {
          expenses.insert(tenant, plain(e))
          if (e.external_ref !== null) externalRefs.set(e.id, e.external_ref)
        })
    return ExpenseRepo.of({
      insert: (tenant, e) => Effect.sync(() => expenses.insert(tenant, plain(e))),
      update: (tenant, e) => Effect.sync(() => void expenses.update(tenant, plain(e))),
      find: (tenant, id) => Effect.sync(() => expenses.find(tenant, id)),
      list: (tenant, f, page) =>
        Effect.sync(() =>
          expenses.page(
            tenant,
            filterPredicates(ExpenseFilter, f),
            page
          )
        ),
      insertAll: (tenant, list) => Effect.forEach(list, (e) => insert(tenant, e), { discard: true }),
      // Memory transactions run one at a time, so reading is already exclusive.
      lockAll: (tenant, ids) =>
        Effect.sync(() => sortedById(ids.flatMap((id) => Option.toArray(expenses.find(tenant, id)).map(referenced)))),
      removeAll: (tenant, ids) =>
        Effect.sync(() => {
          for (const id of ids) if (expenses.remove(tenant, id)) externalRefs.delete(id)
        }),
      findByExternalRefs: (tenant, refs) =>
        Effect.sync(() => {
          const wanted = new Set(refs)
          return expenses.filter(tenant, (e) => {
            const ref = externalRefs.get(e.id)
            return ref !== undefined && wanted.has(ref)
          }).map(referenced)
        })
    })
  })
)
