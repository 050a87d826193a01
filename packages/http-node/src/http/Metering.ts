import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Subscriptions, Usage } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { currentTenant } from "../api/envelope.ts"
import { domain } from "../api/errors.ts"
import { listForTenant, withTenant } from "./respond.ts"

export const MeteringHandlers = HttpApiBuilder.group(
  Api,
  "metering",
  Effect.fn(function*(handlers) {
    const subscriptions = yield* Subscriptions.Subscriptions
    const usage = yield* Usage.Usage
    return handlers
      .handle("list", ({ query }) => listForTenant(query, (tenant, filter, page) => subscriptions.list(tenant, filter, page)))
      .handle("get", ({ params }) => withTenant((tenant) => subscriptions.get(tenant, params.id)))
      .handle("create", ({ payload }) => withTenant((tenant) => subscriptions.create(tenant, payload)))
      .handle("update", ({ params, payload }) => withTenant((tenant) => subscriptions.update(tenant, params.id, payload)))
      .handle("reportUsage", ({ params, payload }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => usage.report(tenant, params.id, payload))))
      .handle("listUsage", ({ params, query }) =>
        listForTenant(query, (tenant, filter, page) => usage.list(tenant, params.id, filter, page)))
  })
)
