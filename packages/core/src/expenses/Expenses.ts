import { Context, Effect, Layer, Option } from "effect"
import { Conflict, InvalidTransition, NotFound, ValidationFailed } from "../shared/errors.ts"
import { Ids, newId } from "../shared/Ids.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import type { Tenant } from "../shared/tenant.ts"
import { nowIso } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { LocationRepo } from "../locations/LocationRepo.ts"
import { ExpenseRepo } from "./ExpenseRepo.ts"
import { type Expense, type ExpenseCreate, type ExpenseFilter, ExpenseId, type ExpenseUpdate } from "./model.ts"
import { canTransition, isEditable } from "./rules.ts"
import { isUuid } from "../shared/schemas.ts"

/** Expenses of an organization environment, with their approval flow. */
export class Expenses extends Context.Service<Expenses, {
  readonly create: (tenant: Tenant, input: ExpenseCreate) => Effect.Effect<Expense, NotFound>
  readonly get: (tenant: Tenant, id: string) => Effect.Effect<Expense, NotFound>
  readonly list: (tenant: Tenant, filter: ExpenseFilter, page: PageRequest) => Effect.Effect<Page<Expense>, ValidationFailed>
  readonly update: (tenant: Tenant, id: string, patch: ExpenseUpdate) => Effect.Effect<Expense, NotFound | InvalidTransition | Conflict>
}>()("@opsplatform/core/expenses/Expenses") {
  static readonly layer: Layer.Layer<Expenses, never, ExpenseRepo | LocationRepo | Ids | Transactor> = Layer.effect(
    Expenses,
    Effect.gen(function*() {
      const repo = yield* ExpenseRepo
      const locations = yield* LocationRepo
      const ids = yield* Ids
      const tx = yield* Transactor

      const get = (tenant: Tenant, id: string) =>
        (isUuid(id) ? repo.find(tenant, id) : Effect.succeedNone).pipe(
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new NotFound({ resource: "expense", id })),
            onSome: Effect.succeed
          }))
        )
      const checkLocation = (tenant: Tenant, id: string | null | undefined) =>
        id === null || id === undefined
          ? Effect.void
          : locations.find(tenant, id).pipe(
            Effect.flatMap((found) =>
              Option.isNone(found) ? Effect.fail(new NotFound({ resource: "location", id })) : Effect.void
            )
          )

      return Expenses.of({
        create: Effect.fn("Expenses.create")(function*(tenant, input) {
          yield* checkLocation(tenant, input.location_id)
          const now = yield* nowIso
          const expense: Expense = {
            id: yield* newId(ids, ExpenseId),
            description: input.description.trim(),
            category: input.category,
            status: input.status ?? "draft",
            amount: input.amount,
            currency: input.currency,
            expense_date: input.expense_date,
            location_id: input.location_id ?? null,
            created_at: now,
            updated_at: now
          }
          yield* repo.insert(tenant, expense)
          return expense
        }),
        get,
        list: (tenant, filter, page) =>
          filter.date_from !== undefined && filter.date_to !== undefined && filter.date_from > filter.date_to
            ? Effect.fail(ValidationFailed.field("date_to", "must not be before date_from"))
            : repo.list(tenant, filter, page),
        update: Effect.fn("Expenses.update")(function*(tenant, id, patch) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            const current = yield* get(tenant, id)
            const { status, ...fields } = patch
            const changesFields = Object.entries(fields).some(([k, v]) => current[k as keyof typeof fields] !== v)
            if (changesFields && !isEditable(current.status)) {
              return yield* new Conflict({ reason: `An ${current.status} expense can only change its status` })
            }
            if (status !== undefined && !canTransition(current.status, status)) {
              return yield* new InvalidTransition({ resource: "expense", from: current.status, to: status })
            }
            yield* checkLocation(tenant, patch.location_id)
            const next: Expense = {
              ...current,
              ...fields,
              description: fields.description === undefined ? current.description : fields.description.trim(),
              status: status ?? current.status,
              updated_at: yield* nowIso
            }
            yield* repo.update(tenant, next)
            return next
          }))
        })
      })
    })
  )
}
