import { Schema, Struct } from "effect"
import { QueryBoolean } from "../shared/filters.ts"
import { IsoDateTime, NonBlankString, Thousandths, Uuid } from "../shared/schemas.ts"
import { normalizePlate, plateIssue } from "./rules.ts"

export const VehicleId = Uuid.pipe(Schema.brand("VehicleId"))
export type VehicleId = typeof VehicleId.Type

export const FuelType = Schema.Literals(["diesel", "petrol", "electric", "hybrid", "lpg"])
export type FuelType = typeof FuelType.Type

/** A plate as stored: upper case, no spaces or dashes (rules.ts `normalizePlate`). */
export const Plate = Schema.String.annotate({
  description: "Romanian registration plate, upper case without spaces or dashes",
  examples: ["B123ABC", "CJ12XYZ"]
})

/** A plate as a caller writes it: any case, with spaces, hyphens or dots between the groups. */
export const PlateInput = Schema.String.annotate({
  description: "Romanian registration plate in any case, with or without spaces or dashes: \"b-123-abc\" and \"B 123 ABC\" are the same",
  examples: ["B 123 ABC"]
}).check(
  Schema.isMaxLength(20),
  Schema.makeFilter((s: string) => normalizePlate(s) !== undefined || plateIssue)
)

const Optional = (max: number) => Schema.NullOr(NonBlankString(max))

export const FleetVehicle = Schema.Struct({
  id: VehicleId,
  plate: Plate,
  make: Optional(100),
  model: Optional(100),
  fuel_type: FuelType,
  capacity_kg: Schema.NullOr(Thousandths(1_000_000).check(Schema.isGreaterThan(0))).annotate({
    description: "Load the vehicle carries, kg, up to three decimals; routes default their capacity_kg to it"
  }),
  capacity_parcels: Schema.NullOr(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1_000_000 }))).annotate({
    description: "Parcels the vehicle carries; routes default their capacity_parcels to it"
  }),
  fuel_consumption_l_per_100km: Schema.NullOr(Thousandths(100).check(Schema.isGreaterThan(0))).annotate({
    description: "Litres per 100 km, up to three decimals; the cost comparison of its routes uses it instead of the fleet cost profile's. None for an electric vehicle"
  }),
  active: Schema.Boolean.annotate({ description: "An inactive vehicle cannot be dispatched (default true)" }),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "FleetVehicle" })
export type FleetVehicle = typeof FleetVehicle.Type

/** What a caller may set: every field but the id and the timestamps, the plate as written. */
const Editable = FleetVehicle.mapFields(
  Struct.pick([
    "plate",
    "make",
    "model",
    "fuel_type",
    "capacity_kg",
    "capacity_parcels",
    "fuel_consumption_l_per_100km",
    "active"
  ])
).mapFields(Struct.assign({ plate: PlateInput }))

/** The plate and fuel type are required; the rest default to none, and `active` to true. */
export const FleetVehicleCreate = Editable.mapFields(Struct.mapOmit(["plate", "fuel_type"], Schema.optionalKey)).annotate({
  identifier: "FleetVehicleCreate"
})
export type FleetVehicleCreate = typeof FleetVehicleCreate.Type

export const FleetVehicleUpdate = Editable.mapFields(Struct.map(Schema.optionalKey)).annotate({
  identifier: "FleetVehicleUpdate"
})
export type FleetVehicleUpdate = typeof FleetVehicleUpdate.Type

export const FleetVehicleFilter = Schema.Struct({
  active: Schema.optionalKey(QueryBoolean),
  fuel_type: Schema.optionalKey(FuelType)
})
export type FleetVehicleFilter = typeof FleetVehicleFilter.Type
