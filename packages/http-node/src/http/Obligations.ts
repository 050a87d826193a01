import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Obligations } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { listForTenant, withTenant } from "./respond.ts"

export const ObligationsHandlers = HttpApiBuilder.group(
  Api,
  "obligations",
  Effect.fn(function*(handlers) {
    const obligations = yield* Obligations.Obligations
    return handlers
      .handle("list", ({ query }) =>
        listForTenant(query, (tenant, filter, page) => obligations.list(tenant, filter, page)))
      .handle("get", ({ params }) =>
        withTenant((tenant) => obligations.get(tenant, params.id)))
      .handle("create", ({ payload }) =>
        withTenant((tenant) => obligations.create(tenant, payload)))
      .handle("update", ({ params, payload }) =>
        withTenant((tenant) => obligations.update(tenant, params.id, payload)))
      .handle("complete", ({ params, payload }) =>
        withTenant((tenant) => obligations.complete(tenant, params.id, payload ?? {})))
      .handle("reopen", ({ params }) =>
        withTenant((tenant) => obligations.reopen(tenant, params.id)))
      .handle("cancel", ({ params }) =>
        withTenant((tenant) => obligations.cancel(tenant, params.id)))
  })
)
