import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CostComparisons, CostingSettings, Pagination, RateLimiter, Routes, type Tenant } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { currentTenant, ok, okPage } from "../api/envelope.ts"
import { domain } from "../api/errors.ts"
import { HeavyTier, heavyTier } from "../api/rateLimit.ts"

/** Runs a core call for the caller's tenant and answers its result in the envelope. */
const withTenant = <A, E, R>(f: (tenant: Tenant.Tenant) => Effect.Effect<A, E, R>) =>
  domain(Effect.flatMap(currentTenant, f).pipe(Effect.map(ok)))

export const DeliveryRoutesHandlers = HttpApiBuilder.group(
  Api,
  "deliveryRoutes",
  Effect.fn(function*(handlers) {
    const routes = yield* Routes.Routes
    const comparisons = yield* CostComparisons.CostComparisons
    const limiter = yield* RateLimiter.RateLimiter
    const tier = yield* HeavyTier
    return handlers
      .handle("list", ({ query }) =>
        domain(Effect.gen(function*() {
          const tenant = yield* currentTenant
          const { cursor, page, perPage, ...filter } = query
          const request = yield* Pagination.pageRequest({ cursor, page, perPage })
          return okPage(yield* routes.list(tenant, filter, request))
        })))
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

export const CostingSettingsHandlers = HttpApiBuilder.group(
  Api,
  "costingSettings",
  Effect.fn(function*(handlers) {
    const settings = yield* CostingSettings.CostingSettings
    return handlers
      .handle("getFleetCostProfile", () => withTenant((t) => settings.getProfile(t)))
      .handle("putFleetCostProfile", ({ payload }) => withTenant((t) => settings.putProfile(t, payload)))
      .handle("getRateCard", () => withTenant((t) => settings.getRateCard(t)))
      .handle("putRateCard", ({ payload }) => withTenant((t) => settings.putRateCard(t, payload)))
      .handle("getSenderAddress", () => withTenant((t) => settings.getSender(t)))
      .handle("putSenderAddress", ({ payload }) => withTenant((t) => settings.putSender(t, payload)))
  })
)
