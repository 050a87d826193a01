import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { LocationModel } from "@opsplatform/core"
import { ConflictError, NotFoundError } from "./errors.ts"
import { Envelope, ListEnvelope, idParam, pageQuery } from "./envelope.ts"
import { scope } from "./security.ts"

const idParams = { id: idParam("The location id") }

export class LocationsApi extends HttpApiGroup.make("locations")
  .add(
    HttpApiEndpoint.get("list", "/locations", {
      query: { ...pageQuery, ...LocationModel.LocationFilter.fields },
      success: ListEnvelope(LocationModel.Location)
    }).pipe(scope("locations:read")),
    HttpApiEndpoint.get("get", "/locations/:id", {
      params: idParams,
      success: Envelope(LocationModel.Location),
      error: NotFoundError
    }).pipe(scope("locations:read")),
    HttpApiEndpoint.post("create", "/locations", {
      payload: LocationModel.LocationCreate,
      success: Envelope(LocationModel.Location).pipe(HttpApiSchema.status(201)),
      error: ConflictError
    }).pipe(scope("locations:write")),
    HttpApiEndpoint.patch("update", "/locations/:id", {
      params: idParams,
      payload: LocationModel.LocationUpdate,
      success: Envelope(LocationModel.Location),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("locations:write")),
    HttpApiEndpoint.delete("remove", "/locations/:id", {
      params: idParams,
      success: Envelope(Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) })),
      error: NotFoundError
    }).pipe(scope("locations:write"))
  )
  .annotateMerge(OpenApi.annotations({
    title: "Locations",
    description: "Sites of the organization. At most one is primary per environment."
  }))
{}
