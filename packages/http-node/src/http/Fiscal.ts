import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Fiscal } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { listForTenant } from "./respond.ts"

export const FiscalHandlers = HttpApiBuilder.group(
  Api,
  "fiscal",
  Effect.fn(function*(handlers) {
    const fiscal = yield* Fiscal.Fiscal
    return handlers.handle("history", ({ params, query }) =>
      listForTenant(query, (tenant, _filter, page) => fiscal.history(tenant, params.id, page)))
  })
)
