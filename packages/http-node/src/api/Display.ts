import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { DisplayModel } from "@opsplatform/core"
import { BadRequestError, LockedError, NotFoundError, NotImplementedError, RateLimitedError, UnavailableError } from "./errors.ts"
import { Envelope, idParam, ListEnvelope, pageQuery } from "./envelope.ts"
import { carriesSecret, ignoresIdempotencyKey } from "./idempotency.ts"
import { scope } from "./security.ts"

const idParams = { id: idParam("The display device id") }

export class DisplayApi extends HttpApiGroup.make("display")
  .add(
    HttpApiEndpoint.get("list", "/display/devices", {
      query: { ...pageQuery, ...DisplayModel.DeviceFilter.fields },
      success: ListEnvelope(DisplayModel.Device)
    }).pipe(scope("display:manage")),
    HttpApiEndpoint.post("create", "/display/devices", {
      payload: DisplayModel.DeviceCreate,
      success: Envelope(DisplayModel.DeviceToken).pipe(HttpApiSchema.status(201)),
      error: NotFoundError
    }).pipe(scope("display:manage"), carriesSecret),
    HttpApiEndpoint.get("get", "/display/devices/:id", {
      params: idParams,
      success: Envelope(DisplayModel.Device),
      error: NotFoundError
    }).pipe(scope("display:manage")),
    HttpApiEndpoint.patch("update", "/display/devices/:id", {
      params: idParams,
      payload: DisplayModel.DeviceUpdate,
      success: Envelope(DisplayModel.Device),
      error: NotFoundError
    }).pipe(scope("display:manage")),
    HttpApiEndpoint.delete("remove", "/display/devices/:id", {
      params: idParams,
      success: Envelope(Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) })),
      error: NotFoundError
    }).pipe(scope("display:manage")),
    HttpApiEndpoint.post("rotateToken", "/display/devices/:id/rotate-token", {
      params: idParams,
      // The body is optional: no body keeps the scopes of the token it replaces.
      payload: [DisplayModel.RotateToken, Schema.Null],
      success: Envelope(DisplayModel.DeviceToken),
      error: NotFoundError
    }).pipe(scope("display:manage"), carriesSecret),
    HttpApiEndpoint.put("setPin", "/display/devices/:id/pin", {
      params: idParams,
      payload: DisplayModel.PinInput,
      success: Envelope(DisplayModel.Device),
      error: [NotFoundError, UnavailableError]
    }).pipe(scope("display:manage")),
    HttpApiEndpoint.delete("clearPin", "/display/devices/:id/pin", {
      params: idParams,
      success: Envelope(DisplayModel.Device),
      error: NotFoundError
    }).pipe(scope("display:manage")),
    HttpApiEndpoint.post("unlock", "/display/unlock", {
      payload: DisplayModel.PinInput,
      success: Envelope(DisplayModel.UnlockResult),
      error: [BadRequestError, NotFoundError, LockedError, RateLimitedError, UnavailableError]
    }).pipe(scope("display:read"), ignoresIdempotencyKey),
    HttpApiEndpoint.post("ask", "/display/assistant", {
      payload: DisplayModel.AssistantQuestion,
      success: Envelope(DisplayModel.AssistantAnswer),
      error: [RateLimitedError, NotImplementedError]
    }).pipe(scope("display:assistant"))
  )
  .annotateMerge(OpenApi.annotations({
    title: "Wall displays",
    description: "Displays on the wall: their devices, tokens and PINs (`display:manage`); unlocking a display with its " +
      "PIN (`display:read`, device tokens only, 5 attempts a minute, every attempt audited); and the pulse assistant " +
      "(`display:assistant`, 20 questions a minute), which answers in Romanian or English from live figures."
  }))
{}
