import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CostingSettings } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { withTenant } from "./respond.ts"

export const CostingHandlers = HttpApiBuilder.group(
  Api,
  "costing",
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
