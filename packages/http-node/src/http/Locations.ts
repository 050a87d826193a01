import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Locations, Pagination } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { currentTenant, ok, okPage } from "../api/envelope.ts"
import { domain } from "../api/errors.ts"

export const LocationsHandlers = HttpApiBuilder.group(
  Api,
  "locations",
  Effect.fn(function*(handlers) {
    const locations = yield* Locations.Locations
    return handlers
      .handle("list", ({ query }) =>
        domain(Effect.gen(function*() {
          const tenant = yield* currentTenant
          const page = yield* Pagination.pageRequest(query)
          return okPage(yield* locations.list(tenant, { vertical_type: query.vertical_type, is_primary: query.is_primary }, page))
        })))
      .handle("get", ({ params }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => locations.get(tenant, params.id)).pipe(Effect.map(ok))))
      .handle("create", ({ payload }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => locations.create(tenant, payload)).pipe(Effect.map(ok))))
      .handle("update", ({ params, payload }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => locations.update(tenant, params.id, payload)).pipe(Effect.map(ok))))
      .handle("remove", ({ params }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => locations.remove(tenant, params.id))).pipe(
          Effect.as(ok({ id: params.id, deleted: true as const }))
        ))
  })
)
