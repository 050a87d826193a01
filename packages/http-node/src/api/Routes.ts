import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { CostingModel, RouteModel, Schemas } from "@opsplatform/core"
import { ConflictError, NotFoundError, RateLimitedError, UnprocessableError } from "./errors.ts"
import { Envelope, ListEnvelope, pageQuery } from "./envelope.ts"
import { scope } from "./security.ts"

const idParam = { id: Schemas.Uuid.annotate({ description: "The delivery route id" }) }
const stopParams = { ...idParam, stopId: Schemas.Uuid.annotate({ description: "The stop id" }) }

const Detail = Envelope(RouteModel.DeliveryRouteWithStops)

/** `marginal` (default) or `full`, in any letter case. */
const ComparisonMode = Schema.String.check(
  Schema.makeFilter((s: string) => ["marginal", "full"].includes(s.toLowerCase()) || "must be marginal or full")
).annotate({ description: "marginal (default: fuel, driver, tolls) or full (adds depreciation, insurance, maintenance, tyres)" })

const lifecycle = (name: "optimize" | "dispatch" | "start" | "complete" | "cancel", description: string) =>
  HttpApiEndpoint.post(name, `/delivery-routes/:id/${name}`, {
    params: idParam,
    success: Detail,
    error: [NotFoundError, ConflictError, UnprocessableError]
  }).pipe(scope("delivery:write")).annotateMerge(OpenApi.annotations({ description }))

export class RoutesApi extends HttpApiGroup.make("routes")
  .add(
    HttpApiEndpoint.get("list", "/delivery-routes", {
      query: { ...pageQuery, ...RouteModel.RouteFilter.fields },
      success: ListEnvelope(RouteModel.DeliveryRoute)
    }).pipe(scope("delivery:read")),
    HttpApiEndpoint.post("create", "/delivery-routes", {
      payload: RouteModel.RouteCreate,
      success: Detail.pipe(HttpApiSchema.status(201)),
      error: NotFoundError
    }).pipe(scope("delivery:write")),
    HttpApiEndpoint.get("get", "/delivery-routes/:id", {
      params: idParam,
      success: Detail,
      error: NotFoundError
    }).pipe(scope("delivery:read")),
    HttpApiEndpoint.patch("update", "/delivery-routes/:id", {
      params: idParam,
      payload: RouteModel.RouteUpdate,
      success: Detail,
      error: [NotFoundError, ConflictError]
    }).pipe(scope("delivery:write")),
    HttpApiEndpoint.post("addStop", "/delivery-routes/:id/stops", {
      params: idParam,
      payload: RouteModel.StopCreate,
      success: Detail.pipe(HttpApiSchema.status(201)),
      error: [NotFoundError, ConflictError, UnprocessableError]
    }).pipe(scope("delivery:write")),
    HttpApiEndpoint.post("reorderStops", "/delivery-routes/:id/stops/reorder", {
      params: idParam,
      payload: RouteModel.StopOrder,
      success: Detail,
      error: [NotFoundError, ConflictError]
    }).pipe(scope("delivery:write")),
    HttpApiEndpoint.patch("updateStop", "/delivery-routes/:id/stops/:stopId", {
      params: stopParams,
      payload: RouteModel.StopUpdate,
      success: Detail,
      error: [NotFoundError, ConflictError]
    }).pipe(scope("delivery:write")),
    HttpApiEndpoint.delete("removeStop", "/delivery-routes/:id/stops/:stopId", {
      params: stopParams,
      success: Detail,
      error: [NotFoundError, ConflictError]
    }).pipe(scope("delivery:write")),
    lifecycle("optimize", "Orders the stops and sets the route's distance and duration: DRAFT or PLANNED → PLANNED"),
    lifecycle("dispatch", "Sends the route to its driver and emits delivery_route.dispatched: PLANNED or DISPATCHED → DISPATCHED"),
    lifecycle("start", "DISPATCHED → IN_PROGRESS"),
    lifecycle("complete", "IN_PROGRESS → COMPLETED"),
    lifecycle("cancel", "DRAFT, PLANNED or DISPATCHED → CANCELLED"),
    HttpApiEndpoint.get("costComparison", "/delivery-routes/:id/cost-comparison", {
      params: idParam,
      query: { mode: Schema.optionalKey(ComparisonMode) },
      success: Envelope(CostingModel.CostComparison),
      error: [NotFoundError, UnprocessableError, RateLimitedError]
    }).pipe(scope("delivery:read")).annotateMerge(OpenApi.annotations({
      description: "Own fleet versus courier for the route's parcels. Heavy rate tier: a per-organization limit per minute, " +
        "answered with 429 `rate_limited`, `Retry-After` and the `RateLimit` / `RateLimit-Policy` headers."
    }))
  )
  .annotateMerge(OpenApi.annotations({
    title: "Delivery routes",
    description: "Routes with their stops, the built-in optimizer, the lifecycle DRAFT → PLANNED → DISPATCHED → IN_PROGRESS → " +
      "COMPLETED (or CANCELLED), and the own-fleet-versus-courier cost comparison."
  }))
{}
