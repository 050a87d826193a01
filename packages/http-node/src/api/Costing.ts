import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { CostingModel } from "@opsplatform/core"
import { NotFoundError } from "./errors.ts"
import { Envelope } from "./envelope.ts"
import { scope } from "./security.ts"

export class CostingApi extends HttpApiGroup.make("costing")
  .add(
    HttpApiEndpoint.get("getFleetCostProfile", "/fleet-cost-profile", {
      success: Envelope(CostingModel.FleetCostProfile),
      error: NotFoundError
    }).pipe(scope("delivery:read")),
    HttpApiEndpoint.put("putFleetCostProfile", "/fleet-cost-profile", {
      payload: CostingModel.FleetCostProfileInput,
      success: Envelope(CostingModel.FleetCostProfile)
    }).pipe(scope("delivery:write")),
    HttpApiEndpoint.get("getRateCard", "/courier-rate-card", {
      success: Envelope(CostingModel.RateCard),
      error: NotFoundError
    }).pipe(scope("delivery:read")),
    HttpApiEndpoint.put("putRateCard", "/courier-rate-card", {
      payload: CostingModel.RateCardInput,
      success: Envelope(CostingModel.RateCard)
    }).pipe(scope("delivery:write")),
    HttpApiEndpoint.get("getSenderAddress", "/sender-address", {
      success: Envelope(CostingModel.SenderAddress),
      error: NotFoundError
    }).pipe(scope("delivery:read")),
    HttpApiEndpoint.put("putSenderAddress", "/sender-address", {
      payload: CostingModel.SenderAddressInput,
      success: Envelope(CostingModel.SenderAddress)
    }).pipe(scope("delivery:write"))
  )
  .annotateMerge(OpenApi.annotations({
    title: "Costing settings",
    description: "The inputs of the route cost comparison: the fleet cost profile, the courier rate card (prices by distance " +
      "band) and the sender address couriers collect from. Each is replaced whole by PUT; GET before the first PUT is 404."
  }))
{}
