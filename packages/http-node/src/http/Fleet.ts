import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Fleet } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { deleted } from "../api/envelope.ts"
import { listForTenant, withTenant } from "./respond.ts"

export const FleetHandlers = HttpApiBuilder.group(
  Api,
  "fleet",
  Effect.fn(function*(handlers) {
    const fleet = yield* Fleet.Fleet
    return handlers
      .handle("list", ({ query }) => listForTenant(query, (tenant, filter, page) => fleet.list(tenant, filter, page)))
      .handle("get", ({ params }) => withTenant((tenant) => fleet.get(tenant, params.id)))
      .handle("create", ({ payload }) => withTenant((tenant) => fleet.create(tenant, payload)))
      .handle("update", ({ params, payload }) => withTenant((tenant) => fleet.update(tenant, params.id, payload)))
      .handle("remove", ({ params }) => withTenant((tenant) => Effect.as(fleet.remove(tenant, params.id), deleted(params.id))))
  })
)
