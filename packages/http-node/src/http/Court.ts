import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Court } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { deleted } from "../api/envelope.ts"
import { listForTenant, withTenant } from "./respond.ts"

export const CourtHandlers = HttpApiBuilder.group(
  Api,
  "court",
  Effect.fn(function*(handlers) {
    const court = yield* Court.Court
    return handlers
      .handle("list", ({ query }) => listForTenant(query, (tenant, filter, page) => court.list(tenant, filter, page)))
      .handle("get", ({ params }) => withTenant((tenant) => court.get(tenant, params.id)))
      .handle("create", ({ payload }) => withTenant((tenant) => court.create(tenant, payload)))
      .handle("update", ({ params, payload }) => withTenant((tenant) => court.update(tenant, params.id, payload)))
      .handle("remove", ({ params }) => withTenant((tenant) => Effect.as(court.remove(tenant, params.id), deleted(params.id))))
      .handle("addHearing", ({ params, payload }) => withTenant((tenant) => court.addHearing(tenant, params.id, payload)))
      .handle("listHearings", ({ params, query }) =>
        listForTenant(query, (tenant, _filter, page) => court.listHearings(tenant, params.id, page)))
      .handle("updateHearing", ({ params, payload }) =>
        withTenant((tenant) => court.updateHearing(tenant, params.id, params.hearingId, payload)))
      .handle("removeHearing", ({ params }) =>
        withTenant((tenant) => Effect.as(court.removeHearing(tenant, params.id, params.hearingId), deleted(params.hearingId))))
  })
)
