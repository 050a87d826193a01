import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Expenses, Pagination } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { currentTenant, ok, okPage } from "../api/envelope.ts"
import { domain } from "../api/errors.ts"

export const ExpensesHandlers = HttpApiBuilder.group(
  Api,
  "expenses",
  Effect.fn(function*(handlers) {
    const expenses = yield* Expenses.Expenses
    return handlers
      .handle("list", ({ query }) =>
        domain(Effect.gen(function*() {
          const tenant = yield* currentTenant
          const { cursor, page, perPage, ...filter } = query
          const request = yield* Pagination.pageRequest({ cursor, page, perPage })
          return okPage(yield* expenses.list(tenant, filter, request))
        })))
      .handle("get", ({ params }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => expenses.get(tenant, params.id)).pipe(Effect.map(ok))))
      .handle("create", ({ payload }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => expenses.create(tenant, payload)).pipe(Effect.map(ok))))
      .handle("update", ({ params, payload }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => expenses.update(tenant, params.id, payload)).pipe(Effect.map(ok))))
  })
)
