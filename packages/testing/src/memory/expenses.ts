import { Effect, Layer } from "effect"
import { ExpenseRepo } from "@opsplatform/core/expenses/ExpenseRepo"
import { type Expense, ExpenseFilter } from "@opsplatform/core/expenses/model"
import { MemoryStore } from "./MemoryStore.ts"
import { filterPredicates, memoryTenantTable } from "./rows.ts"

export const ExpenseRepoMemory: Layer.Layer<ExpenseRepo, never, MemoryStore> = Layer.effect(
  ExpenseRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const expenses = memoryTenantTable<Expense>(store, "expenses")
    return ExpenseRepo.of({
      insert: (tenant, e) => Effect.sync(() => expenses.insert(tenant, e)),
      update: (tenant, e) => Effect.sync(() => void expenses.update(tenant, e)),
      find: (tenant, id) => Effect.sync(() => expenses.find(tenant, id)),
      list: (tenant, f, page) =>
        Effect.sync(() =>
          expenses.page(
            tenant,
            filterPredicates(ExpenseFilter, f),
            page
          )
        )
    })
  })
)
