import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Locations } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { listForTenant, withTenant } from "./respond.ts"

export const LocationsHandlers = HttpApiBuilder.group(
  Api,
  "locations",
  Effect.fn(function*(handlers) {
    const locations = yield* Locations.Locations
    return handlers
      .handle("list", ({ query }) =>
        listForTenant(query, (tenant, filter, page) => locations.list(tenant, filter, page)))
      .handle("get", ({ params }) =>
        withTenant((tenant) => locations.get(tenant, params.id)))
      .handle("create", ({ payload }) =>
        withTenant((tenant) => locations.create(tenant, payload)))
      .handle("update", ({ params, payload }) =>
        withTenant((tenant) => locations.update(tenant, params.id, payload)))
      .handle("remove", ({ params }) =>
        withTenant((tenant) => Effect.as(locations.remove(tenant, params.id), { id: params.id, deleted: true as const })))
  })
)
