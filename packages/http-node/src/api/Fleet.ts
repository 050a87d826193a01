import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { FleetModel } from "@opsplatform/core"
import { ConflictError, NotFoundError } from "./errors.ts"
import { DeletedEnvelope, Envelope, idParam, ListEnvelope, pageQuery } from "./envelope.ts"
import { scope } from "./security.ts"

const idParams = { id: idParam("The fleet vehicle id") }

export class FleetApi extends HttpApiGroup.make("fleet")
  .add(
    HttpApiEndpoint.get("list", "/fleet-vehicles", {
      query: { ...pageQuery, ...FleetModel.FleetVehicleFilter.fields },
      success: ListEnvelope(FleetModel.FleetVehicle)
    }).pipe(scope("fleet:read")),
    HttpApiEndpoint.get("get", "/fleet-vehicles/:id", {
      params: idParams,
      success: Envelope(FleetModel.FleetVehicle),
      error: NotFoundError
    }).pipe(scope("fleet:read")),
    HttpApiEndpoint.post("create", "/fleet-vehicles", {
      payload: FleetModel.FleetVehicleCreate,
      success: Envelope(FleetModel.FleetVehicle).pipe(HttpApiSchema.status(201)),
      error: ConflictError
    }).pipe(scope("fleet:write")).annotateMerge(OpenApi.annotations({ description: "Emits fleet_vehicle.created" })),
    HttpApiEndpoint.patch("update", "/fleet-vehicles/:id", {
      params: idParams,
      payload: FleetModel.FleetVehicleUpdate,
      success: Envelope(FleetModel.FleetVehicle),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("fleet:write")).annotateMerge(OpenApi.annotations({
      description: "Emits fleet_vehicle.updated naming the fields that changed; an edit that changes nothing emits nothing"
    })),
    HttpApiEndpoint.delete("remove", "/fleet-vehicles/:id", {
      params: idParams,
      success: DeletedEnvelope,
      error: [NotFoundError, ConflictError]
    }).pipe(scope("fleet:write")).annotateMerge(OpenApi.annotations({
      description: "Emits fleet_vehicle.deleted; refused with 409 while a route that is not finished uses the vehicle"
    }))
  )
  .annotateMerge(OpenApi.annotations({
    title: "Fleet vehicles",
    description: "The organization's vehicles. A Romanian plate is stored upper case without spaces or dashes " +
      "(\"b-123-abc\" and \"B 123 ABC\" are the same vehicle), one vehicle per plate. Delivery routes take their " +
      "vehicle from here: its capacities by default, its fuel consumption in the cost comparison."
  }))
{}
