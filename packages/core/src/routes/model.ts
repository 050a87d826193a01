import { Schema, Struct } from "effect"
import { LocationId } from "../locations/model.ts"
import { Filters } from "../shared/filters.ts"
import { Instant, isMaxChars, IsoDate, IsoDateTime, isPattern, NonBlankString, Thousandths, Uuid } from "../shared/schemas.ts"

export const RouteId = Uuid.pipe(Schema.brand("RouteId"))
export type RouteId = typeof RouteId.Type

export const StopId = Uuid.pipe(Schema.brand("StopId"))
export type StopId = typeof StopId.Type

/** Route statuses; the moves between them are `routeTransitions` in rules.ts. */
export const RouteStatus = Schema.Literals(["DRAFT", "PLANNED", "DISPATCHED", "IN_PROGRESS", "COMPLETED", "CANCELLED"])
export type RouteStatus = typeof RouteStatus.Type
export const routeStatuses: ReadonlyArray<RouteStatus> = RouteStatus.literals

/** The lifecycle actions, each an endpoint `POST /delivery-routes/{id}/<action>`. */
export const RouteAction = Schema.Literals(["optimize", "dispatch", "start", "complete", "cancel"])
export type RouteAction = typeof RouteAction.Type
export const routeActions: ReadonlyArray<RouteAction> = RouteAction.literals

/** Most stops one route may hold. */
export const MAX_STOPS = 500

export const Latitude = Schema.Number.check(Schema.isBetween({ minimum: -90, maximum: 90 }))
export const Longitude = Schema.Number.check(Schema.isBetween({ minimum: -180, maximum: 180 }))

export { Thousandths }

/** A postal address (the spec leaves its shape open; decided: docs/decisions.md). */
export const Address = Schema.Struct({
  line1: NonBlankString(200),
  line2: Schema.NullOr(Schema.String.check(isMaxChars(200))),
  postal_code: Schema.NullOr(Schema.String.check(isMaxChars(20))),
  city: NonBlankString(100),
  region: Schema.NullOr(Schema.String.check(isMaxChars(100))),
  country: Schema.String.check(
    isPattern(/^[A-Z]{2}$/, { message: "must be an ISO 3166-1 alpha-2 country code, e.g. RO" })
  ).annotate({ description: "ISO 3166-1 alpha-2 code" })
}).annotate({ identifier: "Address" })
export type Address = typeof Address.Type

/** The street, city and country are required; the other lines may be left out (null). */
export const AddressInput = Address.mapFields(Struct.mapOmit(["line1", "city", "country"], Schema.optionalKey)).annotate({
  identifier: "AddressInput"
})
export type AddressInput = typeof AddressInput.Type

export const normalizeAddress = (a: AddressInput): Address => ({
  line1: a.line1.trim(),
  line2: a.line2 ?? null,
  postal_code: a.postal_code ?? null,
  city: a.city.trim(),
  region: a.region ?? null,
  country: a.country
})

/** A local time of day, `HH:MM` (24 hours). */
export const TimeOfDay = Schema.String.check(
  isPattern(/^([01]\d|2[0-3]):[0-5]\d$/, { message: "must be a time of day HH:MM, e.g. 09:30" })
).annotate({ description: "Local time of day, HH:MM" })

/** An RFC 3339 date-time with its offset, e.g. `2026-03-02T07:30:00+02:00`. */
/** An instant with an offset within the API's instant range (the shared `Instant`). */
export const DateTimeInput = Instant

const Notes = Schema.NullOr(Schema.String.check(isMaxChars(2000)))

export const Stop = Schema.Struct({
  id: StopId,
  position: Schema.Int.annotate({ description: "1 for the first stop of the route" }),
  label: NonBlankString(200),
  address: Schema.NullOr(Address),
  latitude: Latitude,
  longitude: Longitude,
  parcels: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 10_000 })),
  weight_kg: Thousandths(100_000),
  service_minutes: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1440 })),
  window_start: Schema.NullOr(TimeOfDay),
  window_end: Schema.NullOr(TimeOfDay),
  notes: Notes,
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "DeliveryRouteStop" })
export type Stop = typeof Stop.Type

/** A stop as stored: the resource and the route it belongs to. */
export const StopRecord = Stop.mapFields(Struct.assign({ route_id: RouteId }))
export type StopRecord = typeof StopRecord.Type

export const DeliveryRoute = Schema.Struct({
  id: RouteId,
  number: Schema.String,
  name: NonBlankString(200),
  status: RouteStatus,
  route_date: IsoDateTime,
  start_location_id: Schema.NullOr(LocationId),
  start_address: Schema.NullOr(Address),
  start_latitude: Latitude,
  start_longitude: Longitude,
  round_trip: Schema.Boolean,
  vehicle_id: Schema.NullOr(Uuid),
  driver_id: Schema.NullOr(Uuid),
  capacity_kg: Schema.NullOr(Thousandths(1_000_000)),
  capacity_parcels: Schema.NullOr(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1_000_000 }))),
  total_distance_km: Schema.NullOr(Schema.Number),
  total_duration_minutes: Schema.NullOr(Schema.Number),
  optimized_at: Schema.NullOr(IsoDateTime),
  optimizer: Schema.NullOr(Schema.String),
  dispatched_at: Schema.NullOr(IsoDateTime),
  started_at: Schema.NullOr(IsoDateTime),
  completed_at: Schema.NullOr(IsoDateTime),
  cancelled_at: Schema.NullOr(IsoDateTime),
  gate_visit_id: Schema.NullOr(Schema.String),
  notes: Notes,
  stop_count: Schema.Int,
  dispatch_count: Schema.Int.annotate({ description: "How many times the route was dispatched" }),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "DeliveryRoute" })
export type DeliveryRoute = typeof DeliveryRoute.Type

/** A route as stored: everything but the stop count, which is derived from the stops. */
export const RouteRecord = DeliveryRoute.mapFields(Struct.omit(["stop_count"]))
export type RouteRecord = typeof RouteRecord.Type

export const DeliveryRouteWithStops = DeliveryRoute.mapFields(Struct.assign({ stops: Schema.Array(Stop) })).annotate({
  identifier: "DeliveryRouteWithStops"
})
export type DeliveryRouteWithStops = typeof DeliveryRouteWithStops.Type

/** What a caller may set on a stop; the address is taken in its input form and normalized. */
const StopEditable = Stop.mapFields(
  Struct.pick([
    "label",
    "address",
    "latitude",
    "longitude",
    "parcels",
    "weight_kg",
    "service_minutes",
    "window_start",
    "window_end",
    "notes"
  ])
).mapFields(Struct.assign({ address: Schema.NullOr(AddressInput) }))

/** The label and position are required; the rest default (1 parcel, 0 kg, 5 minutes, no window, no address). */
export const StopCreate = StopEditable.mapFields(Struct.mapOmit(["label", "latitude", "longitude"], Schema.optionalKey))
  .annotate({ identifier: "DeliveryRouteStopCreate" })
export type StopCreate = typeof StopCreate.Type

export const StopUpdate = StopEditable.mapFields(Struct.map(Schema.optionalKey)).annotate({
  identifier: "DeliveryRouteStopUpdate"
})
export type StopUpdate = typeof StopUpdate.Type

/**
 * What a caller may set on a route. Three fields differ from the resource:
 * the date is taken with any offset (and stored in UTC), the start address in
 * its input form, and the start coordinates accept null so that clearing them
 * is refused with a message of its own.
 */
const RouteEditable = DeliveryRoute.mapFields(
  Struct.pick([
    "name",
    "route_date",
    "start_location_id",
    "start_address",
    "start_latitude",
    "start_longitude",
    "round_trip",
    "vehicle_id",
    "driver_id",
    "capacity_kg",
    "capacity_parcels",
    "notes"
  ])
).mapFields(Struct.assign({
  route_date: DateTimeInput,
  start_address: Schema.NullOr(AddressInput),
  start_latitude: Schema.NullOr(Latitude),
  start_longitude: Schema.NullOr(Longitude)
}))

/** The name and date are required, and the stops may come along (at most `MAX_STOPS`). */
export const RouteCreate = RouteEditable.mapFields(Struct.mapOmit(["name", "route_date"], Schema.optionalKey))
  .mapFields(Struct.assign({ stops: Schema.optionalKey(Schema.Array(StopCreate).check(Schema.isMaxLength(MAX_STOPS))) }))
  .annotate({ identifier: "DeliveryRouteCreate" })
export type RouteCreate = typeof RouteCreate.Type

export const RouteUpdate = RouteEditable.mapFields(Struct.map(Schema.optionalKey)).annotate({
  identifier: "DeliveryRouteUpdate"
})
export type RouteUpdate = typeof RouteUpdate.Type

export const StopOrder = Schema.Struct({
  stop_ids: Schema.Array(Uuid).check(Schema.isMinLength(1), Schema.isMaxLength(MAX_STOPS), Schema.isUnique())
}).annotate({ identifier: "DeliveryRouteStopOrder" })
export type StopOrder = typeof StopOrder.Type

/** Dates are days in the organization's time zone: the store turns them into `route_date` within [from, before). */
export const RouteFilter = Schema.Struct({
  status: Schema.optionalKey(RouteStatus),
  date_from: Schema.optionalKey(
    IsoDate.annotate({ description: "route_date on or after this day (organization's time zone)" }).pipe(Filters.own)
  ),
  date_to: Schema.optionalKey(
    IsoDate.annotate({ description: "route_date on or before this day (organization's time zone)" }).pipe(Filters.own)
  )
})
export type RouteFilter = typeof RouteFilter.Type
