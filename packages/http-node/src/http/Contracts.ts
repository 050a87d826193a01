import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Contracts } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { listForTenant, withTenant } from "./respond.ts"

export const ContractsHandlers = HttpApiBuilder.group(
  Api,
  "contracts",
  Effect.fn(function*(handlers) {
    const contracts = yield* Contracts.Contracts
    return handlers
      .handle("list", ({ query }) =>
        listForTenant(query, (tenant, _filter, page) => contracts.list(tenant, page)))
      .handle("get", ({ params }) =>
        withTenant((tenant) => contracts.get(tenant, params.id)))
      .handle("create", ({ payload }) =>
        withTenant((tenant) => contracts.create(tenant, payload)))
      .handle("update", ({ params, payload }) =>
        withTenant((tenant) => contracts.update(tenant, params.id, payload)))
  })
)
