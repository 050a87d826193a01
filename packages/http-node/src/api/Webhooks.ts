import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { WebhookModel } from "@opsplatform/core"
import { ConflictError, NotFoundError, RateLimitedError } from "./errors.ts"
import { Envelope, idParam, ListEnvelope, pageQuery } from "./envelope.ts"
import { carriesSecret } from "./idempotency.ts"
import { scope } from "./security.ts"

const idParams = { id: idParam("The webhook subscription id") }
const deliveryParams = {
  ...idParams,
  deliveryId: idParam("The delivery id (the `X-Service-Delivery` header of each attempt)")
}

export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("events", "/webhooks/events", {
      success: Envelope(Schema.Array(WebhookModel.WebhookEventType))
    }).pipe(scope("webhooks:read")),
    HttpApiEndpoint.post("createPortalSession", "/webhooks/portal-sessions", {
      // The body is optional: no body means a one-hour session that may change everything, for every type.
      payload: [WebhookModel.PortalSessionCreate, Schema.Null],
      success: Envelope(WebhookModel.PortalSessionCreated).pipe(HttpApiSchema.status(201))
    }).annotate(OpenApi.Description, "A one-time link to the webhook portal for the caller's organization environment: " +
      "a page where the people who receive the webhooks add and edit their endpoints, read the event catalog with its schemas, " +
      "send test events and replay deliveries. The link works once, until `expires_at`; opening it starts a browser session " +
      "that lasts as long. Revoke it with DELETE /v1/webhooks/portal-sessions/{id}.")
      .pipe(scope("webhooks:write"), carriesSecret),
    HttpApiEndpoint.delete("revokePortalSession", "/webhooks/portal-sessions/:id", {
      params: { id: idParam("The portal session id") },
      success: Envelope(Schema.Struct({ id: Schema.String, revoked: Schema.Literal(true) })),
      error: NotFoundError
    }).annotate(OpenApi.Description, "Ends a portal session at once: its link no longer opens and its browser is signed out.")
      .pipe(scope("webhooks:write")),
    HttpApiEndpoint.get("list", "/webhooks", {
      query: pageQuery,
      success: ListEnvelope(WebhookModel.WebhookSubscription)
    }).pipe(scope("webhooks:read")),
    HttpApiEndpoint.post("create", "/webhooks", {
      payload: WebhookModel.WebhookSubscriptionCreate,
      success: Envelope(WebhookModel.WebhookSubscriptionWithSecret).pipe(HttpApiSchema.status(201)),
      error: ConflictError
    }).annotate(OpenApi.Description, "At most `OPSPLATFORM_WEBHOOKS_MAX_SUBSCRIPTIONS` (20) per organization environment; past it, 409 `conflict`.")
      .pipe(scope("webhooks:write"), carriesSecret),
    HttpApiEndpoint.get("get", "/webhooks/:id", {
      params: idParams,
      success: Envelope(WebhookModel.WebhookSubscription),
      error: NotFoundError
    }).pipe(scope("webhooks:read")),
    HttpApiEndpoint.patch("update", "/webhooks/:id", {
      params: idParams,
      payload: WebhookModel.WebhookSubscriptionUpdate,
      success: Envelope(WebhookModel.WebhookSubscription),
      error: NotFoundError
    }).pipe(scope("webhooks:write")),
    HttpApiEndpoint.delete("remove", "/webhooks/:id", {
      params: idParams,
      success: Envelope(Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) })),
      error: NotFoundError
    }).pipe(scope("webhooks:write")),
    HttpApiEndpoint.post("rotateSecret", "/webhooks/:id/rotate-secret", {
      params: idParams,
      // The body is optional: no body means the defaults.
      payload: [WebhookModel.WebhookSecretRotate, Schema.Null],
      success: Envelope(WebhookModel.WebhookSubscriptionWithSecret),
      error: NotFoundError
    }).pipe(scope("webhooks:write"), carriesSecret),
    HttpApiEndpoint.get("secret", "/webhooks/:id/secret", {
      params: idParams,
      success: Envelope(WebhookModel.WebhookSecret),
      error: NotFoundError
    }).annotate(OpenApi.Description, "The current signing key: the `whsec_` secret of a `v1` subscription, or the `whpk_` " +
      "public key of a `v1a` one. Reading a secret takes the write scope.")
      .pipe(scope("webhooks:write")),
    HttpApiEndpoint.get("publicKeys", "/webhooks/:id/public-keys", {
      params: idParams,
      success: Envelope(Schema.Array(WebhookModel.WebhookPublicKey)),
      error: NotFoundError
    }).annotate(OpenApi.Description, "The public keys `v1a` deliveries are signed with now, newest first: the current key and, " +
      "after a rotation, the previous ones until they expire. Empty for a `v1` subscription. Fetch it again after a rotation.")
      .pipe(scope("webhooks:read")),
    HttpApiEndpoint.post("test", "/webhooks/:id/test", {
      params: idParams,
      success: Envelope(WebhookModel.WebhookTestResult).pipe(HttpApiSchema.status(202)),
      error: [NotFoundError, ConflictError, RateLimitedError]
    }).annotate(OpenApi.Description, "At most `OPSPLATFORM_WEBHOOKS_TESTS_PER_MIN` (10) a minute per organization environment; " +
      "past it, 429 `rate_limited` with `Retry-After`.")
      .pipe(scope("webhooks:write")),
    HttpApiEndpoint.get("deliveries", "/webhooks/:id/deliveries", {
      params: idParams,
      query: {
        ...pageQuery,
        ...WebhookModel.DeliveryFilter.fields
      },
      success: ListEnvelope(WebhookModel.WebhookDelivery),
      error: NotFoundError
    }).pipe(scope("webhooks:read")),
    HttpApiEndpoint.get("delivery", "/webhooks/:id/deliveries/:deliveryId", {
      params: deliveryParams,
      success: Envelope(WebhookModel.WebhookDelivery),
      error: NotFoundError
    }).pipe(scope("webhooks:read")),
    HttpApiEndpoint.get("attempts", "/webhooks/:id/deliveries/:deliveryId/attempts", {
      params: deliveryParams,
      query: pageQuery,
      success: ListEnvelope(WebhookModel.WebhookAttempt),
      error: NotFoundError
    }).pipe(scope("webhooks:read")),
    HttpApiEndpoint.post("redeliver", "/webhooks/:id/deliveries/:deliveryId/redeliver", {
      params: deliveryParams,
      payload: [WebhookModel.WebhookRedeliver, Schema.Null],
      success: HttpApiSchema.Empty(200).annotate({ description: "Scheduled: the delivery is due now. The body is empty." }),
      error: [NotFoundError, ConflictError, RateLimitedError]
    }).annotate(OpenApi.Description, "At most `OPSPLATFORM_WEBHOOKS_REDELIVERIES_PER_MIN` (60) a minute per organization environment; " +
      "past it, 429 `rate_limited` with `Retry-After`.")
      .pipe(scope("webhooks:write"))
  )
  .annotateMerge(OpenApi.annotations({
    title: "Webhooks",
    description: "Subscriptions to events, signed the Standard Webhooks way (`v1` HMAC with a `whsec_` secret, or `v1a` " +
      "Ed25519 verified with a `whpk_` public key), with the delivery log and redeliver. " +
      "Deliveries are at-least-once: dedupe on the `webhook-id` header (the event id)."
  }))
{}
