import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Expenses } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { listForTenant, withTenant } from "./respond.ts"

export const ExpensesHandlers = HttpApiBuilder.group(
  Api,
  "expenses",
  Effect.fn(function*(handlers) {
    const expenses = yield* Expenses.Expenses
    return handlers
      .handle("list", ({ query }) =>
        listForTenant(query, (tenant, filter, page) => expenses.list(tenant, filter, page)))
      .handle("get", ({ params }) =>
        withTenant((tenant) => expenses.get(tenant, params.id)))
      .handle("create", ({ payload }) =>
        withTenant((tenant) => expenses.create(tenant, payload)))
      .handle("update", ({ params, payload }) =>
        withTenant((tenant) => expenses.update(tenant, params.id, payload)))
  })
)
