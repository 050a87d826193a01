import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Obligations, Pagination } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { currentTenant, ok, okPage } from "../api/envelope.ts"
import { domain } from "../api/errors.ts"

export const ObligationsHandlers = HttpApiBuilder.group(
  Api,
  "obligations",
  Effect.fn(function*(handlers) {
    const obligations = yield* Obligations.Obligations
    return handlers
      .handle("list", ({ query }) =>
        domain(Effect.gen(function*() {
          const tenant = yield* currentTenant
          const { cursor, page, perPage, ...filter } = query
          const request = yield* Pagination.pageRequest({ cursor, page, perPage })
          return okPage(yield* obligations.list(tenant, filter, request))
        })))
      .handle("get", ({ params }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => obligations.get(tenant, params.id)).pipe(Effect.map(ok))))
      .handle("create", ({ payload }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => obligations.create(tenant, payload)).pipe(Effect.map(ok))))
      .handle("update", ({ params, payload }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => obligations.update(tenant, params.id, payload)).pipe(Effect.map(ok))))
      .handle("complete", ({ params, payload }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => obligations.complete(tenant, params.id, payload ?? {})).pipe(Effect.map(ok))))
      .handle("reopen", ({ params }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => obligations.reopen(tenant, params.id)).pipe(Effect.map(ok))))
      .handle("cancel", ({ params }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => obligations.cancel(tenant, params.id)).pipe(Effect.map(ok))))
  })
)
