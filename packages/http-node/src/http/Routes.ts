import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CostComparisons, RateLimiter, Routes } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { HeavyTier, heavyTier } from "../api/rateLimit.ts"
import { listForTenant, withTenant } from "./respond.ts"

export const RoutesHandlers = HttpApiBuilder.group(
  Api,
  "routes",
  Effect.fn(function*(handlers) {
    const routes = yield* Routes.Routes
    const comparisons = yield* CostComparisons.CostComparisons
    const limiter = yield* RateLimiter.RateLimiter
    const tier = yield* HeavyTier
    return handlers
      .handle("list", ({ query }) =>
        listForTenant(query, (tenant, filter, page) => routes.list(tenant, filter, page)))
      .handle("create", ({ payload }) => withTenant((t) => routes.create(t, payload)))
      .handle("get", ({ params }) => withTenant((t) => routes.get(t, params.id)))
      .handle("update", ({ params, payload }) => withTenant((t) => routes.update(t, params.id, payload)))
      .handle("addStop", ({ params, payload }) => withTenant((t) => routes.addStop(t, params.id, payload)))
      .handle("reorderStops", ({ params, payload }) => withTenant((t) => routes.reorderStops(t, params.id, payload.stop_ids)))
      .handle("updateStop", ({ params, payload }) => withTenant((t) => routes.updateStop(t, params.id, params.stopId, payload)))
      .handle("removeStop", ({ params }) => withTenant((t) => routes.removeStop(t, params.id, params.stopId)))
      .handle("optimize", ({ params }) => withTenant((t) => routes.optimize(t, params.id)))
      .handle("dispatch", ({ params }) => withTenant((t) => routes.dispatch(t, params.id)))
      .handle("start", ({ params }) => withTenant((t) => routes.start(t, params.id)))
      .handle("complete", ({ params }) => withTenant((t) => routes.complete(t, params.id)))
      .handle("cancel", ({ params }) => withTenant((t) => routes.cancel(t, params.id)))
      .handle("costComparison", ({ params, query }) =>
        withTenant((t) =>
          Effect.andThen(
            heavyTier(limiter, tier, t.organizationId),
            comparisons.compare(t, params.id, query.mode?.toLowerCase() === "full" ? "FULL" : "MARGINAL")
          )
        ))
  })
)
