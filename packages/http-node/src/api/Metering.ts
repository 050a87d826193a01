import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { MeteringModel } from "@opsplatform/core"
import { ConflictError, NotFoundError } from "./errors.ts"
import { Envelope, idParam, ListEnvelope, pageQuery } from "./envelope.ts"
import { scope } from "./security.ts"

const idParams = { id: idParam("The subscription id") }

export class MeteringApi extends HttpApiGroup.make("metering")
  .add(
    HttpApiEndpoint.get("list", "/subscriptions", {
      query: { ...pageQuery, ...MeteringModel.SubscriptionFilter.fields },
      success: ListEnvelope(MeteringModel.Subscription)
    }).pipe(scope("subscriptions:read")),
    HttpApiEndpoint.get("get", "/subscriptions/:id", {
      params: idParams,
      success: Envelope(MeteringModel.Subscription),
      error: NotFoundError
    }).pipe(scope("subscriptions:read")),
    HttpApiEndpoint.post("create", "/subscriptions", {
      payload: MeteringModel.SubscriptionCreate,
      success: Envelope(MeteringModel.Subscription).pipe(HttpApiSchema.status(201)),
      error: NotFoundError
    }).pipe(scope("subscriptions:write")),
    HttpApiEndpoint.patch("update", "/subscriptions/:id", {
      params: idParams,
      payload: MeteringModel.SubscriptionUpdate,
      success: Envelope(MeteringModel.Subscription),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("subscriptions:write")),
    HttpApiEndpoint.post("reportUsage", "/subscriptions/:id/usage", {
      params: idParams,
      payload: MeteringModel.UsageReport,
      success: HttpApiSchema.Empty(200).annotate({
        description: "Recorded (or, under an identifier already recorded, nothing to do). The body is empty."
      }),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("payments:charge")),
    HttpApiEndpoint.get("listUsage", "/subscriptions/:id/usage", {
      params: idParams,
      query: { ...pageQuery, ...MeteringModel.UsageFilter.fields },
      success: ListEnvelope(MeteringModel.UsageRecord),
      error: NotFoundError
    }).pipe(scope("subscriptions:read"))
  )
  .annotateMerge(OpenApi.annotations({
    title: "Subscriptions and usage",
    description: "Metered subscriptions of your contacts and the usage reported on them, forwarded to the payment " +
      "processor (Stripe Billing) as meter events. A report is recorded once per identifier, forever; a retry is a " +
      "no-op. Usage is accepted only on an active subscription, with a timestamp within the last 35 days and at most " +
      "5 minutes ahead."
  }))
{}
