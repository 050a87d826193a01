import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Contracts, Pagination } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { currentTenant, ok, okPage } from "../api/envelope.ts"
import { domain } from "../api/errors.ts"

export const ContractsHandlers = HttpApiBuilder.group(
  Api,
  "contracts",
  Effect.fn(function*(handlers) {
    const contracts = yield* Contracts.Contracts
    return handlers
      .handle("list", ({ query }) =>
        domain(Effect.gen(function*() {
          const tenant = yield* currentTenant
          return okPage(yield* contracts.list(tenant, yield* Pagination.pageRequest(query)))
        })))
      .handle("get", ({ params }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => contracts.get(tenant, params.id)).pipe(Effect.map(ok))))
      .handle("create", ({ payload }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => contracts.create(tenant, payload)).pipe(Effect.map(ok))))
      .handle("update", ({ params, payload }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => contracts.update(tenant, params.id, payload)).pipe(Effect.map(ok))))
  })
)
