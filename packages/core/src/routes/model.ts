import { Schema } from "effect"
import { IsoDateTime, NonBlankString, Uuid } from "../shared/schemas.ts"

/** Route statuses; the moves between them are `routeTransitions` in rules.ts. */
export const RouteStatus = Schema.Literals(["DRAFT", "PLANNED", "DISPATCHED", "IN_PROGRESS", "COMPLETED", "CANCELLED"])
export type RouteStatus = typeof RouteStatus.Type
export const routeStatuses: ReadonlyArray<RouteStatus> = RouteStatus.literals

/** The lifecycle actions, each an endpoint `POST /delivery-routes/{id}/<action>`. */
export const RouteAction = Schema.Literals(["optimize", "dispatch", "start", "complete", "cancel"])
export type RouteAction = typeof RouteAction.Type
export const routeActions: ReadonlyArray<RouteAction> = RouteAction.literals

/** Whether an id can name a stored row at all (anything else is simply not found). */
export const isUuid = Schema.is(Uuid)

/** Most stops one route may hold. */
export const MAX_STOPS = 500

export const Latitude = Schema.Number.check(Schema.isBetween({ minimum: -90, maximum: 90 }))
export const Longitude = Schema.Number.check(Schema.isBetween({ minimum: -180, maximum: 180 }))

/** A non-negative number with at most three decimals (kilograms to the gram, kilometres to the metre). */
export const Thousandths = (maximum: number) =>
  Schema.Number.check(
    Schema.isBetween({ minimum: 0, maximum }),
    Schema.makeFilter((n: number) =>
      Math.abs(n * 1000 - Math.round(n * 1000)) < 1e-6 || "must have at most three decimals"
    )
  )

const optionalText = (max: number) => Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(max))))

/** A postal address (the spec leaves its shape open; decided: docs/decisions.md). */
export const Address = Schema.Struct({
  line1: Schema.String,
  line2: Schema.NullOr(Schema.String),
  postal_code: Schema.NullOr(Schema.String),
  city: Schema.String,
  region: Schema.NullOr(Schema.String),
  country: Schema.String.annotate({ description: "ISO 3166-1 alpha-2 code" })
}).annotate({ identifier: "Address" })
export type Address = typeof Address.Type

export const AddressInput = Schema.Struct({
  line1: NonBlankString(200),
  line2: optionalText(200),
  postal_code: optionalText(20),
  city: NonBlankString(100),
  region: optionalText(100),
  country: Schema.String.check(
    Schema.isPattern(/^[A-Z]{2}$/, { message: "must be an ISO 3166-1 alpha-2 country code, e.g. RO" })
  )
}).annotate({ identifier: "AddressInput" })
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
  Schema.isPattern(/^([01]\d|2[0-3]):[0-5]\d$/, { message: "must be a time of day HH:MM, e.g. 09:30" })
).annotate({ description: "Local time of day, HH:MM" })

/** An RFC 3339 date-time with its offset, e.g. `2026-03-02T07:30:00+02:00`. */
export const DateTimeInput = Schema.String.check(
  Schema.makeFilter((s: string) =>
    (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(s) && !Number.isNaN(Date.parse(s))) ||
    "must be a date-time with an offset, e.g. 2026-03-02T07:30:00+02:00"
  )
).annotate({ format: "date-time" })

export const Stop = Schema.Struct({
  id: Schema.String,
  position: Schema.Int.annotate({ description: "1 for the first stop of the route" }),
  label: Schema.String,
  address: Schema.NullOr(Address),
  latitude: Schema.Number,
  longitude: Schema.Number,
  parcels: Schema.Int,
  weight_kg: Schema.Number,
  service_minutes: Schema.Int,
  window_start: Schema.NullOr(Schema.String),
  window_end: Schema.NullOr(Schema.String),
  notes: Schema.NullOr(Schema.String),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "DeliveryRouteStop" })
export type Stop = typeof Stop.Type

const routeFields = {
  id: Schema.String,
  number: Schema.String,
  name: Schema.String,
  status: RouteStatus,
  route_date: IsoDateTime,
  start_location_id: Schema.NullOr(Schema.String),
  start_address: Schema.NullOr(Address),
  start_latitude: Schema.Number,
  start_longitude: Schema.Number,
  round_trip: Schema.Boolean,
  vehicle_id: Schema.NullOr(Schema.String),
  driver_id: Schema.NullOr(Schema.String),
  capacity_kg: Schema.NullOr(Schema.Number),
  capacity_parcels: Schema.NullOr(Schema.Int),
  total_distance_km: Schema.NullOr(Schema.Number),
  total_duration_minutes: Schema.NullOr(Schema.Number),
  optimized_at: Schema.NullOr(IsoDateTime),
  optimizer: Schema.NullOr(Schema.String),
  dispatched_at: Schema.NullOr(IsoDateTime),
  started_at: Schema.NullOr(IsoDateTime),
  completed_at: Schema.NullOr(IsoDateTime),
  cancelled_at: Schema.NullOr(IsoDateTime),
  gate_visit_id: Schema.NullOr(Schema.String),
  notes: Schema.NullOr(Schema.String),
  stop_count: Schema.Int,
  dispatch_count: Schema.Int.annotate({ description: "How many times the route was dispatched" }),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}

export const DeliveryRoute = Schema.Struct(routeFields).annotate({ identifier: "DeliveryRoute" })
export type DeliveryRoute = typeof DeliveryRoute.Type

export const DeliveryRouteWithStops = Schema.Struct({ ...routeFields, stops: Schema.Array(Stop) }).annotate({
  identifier: "DeliveryRouteWithStops"
})
export type DeliveryRouteWithStops = typeof DeliveryRouteWithStops.Type

const stopFields = {
  label: NonBlankString(200),
  latitude: Latitude,
  longitude: Longitude,
  address: Schema.optionalKey(Schema.NullOr(AddressInput)),
  parcels: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 10_000 }))),
  weight_kg: Schema.optionalKey(Thousandths(100_000)),
  service_minutes: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1440 }))),
  window_start: Schema.optionalKey(Schema.NullOr(TimeOfDay)),
  window_end: Schema.optionalKey(Schema.NullOr(TimeOfDay)),
  notes: optionalText(2000)
}

export const StopCreate = Schema.Struct(stopFields).annotate({ identifier: "DeliveryRouteStopCreate" })
export type StopCreate = typeof StopCreate.Type

export const StopUpdate = Schema.Struct({
  ...stopFields,
  label: Schema.optionalKey(stopFields.label),
  latitude: Schema.optionalKey(Latitude),
  longitude: Schema.optionalKey(Longitude)
}).annotate({ identifier: "DeliveryRouteStopUpdate" })
export type StopUpdate = typeof StopUpdate.Type

const routeInputFields = {
  name: NonBlankString(200),
  route_date: DateTimeInput,
  start_location_id: Schema.optionalKey(Schema.NullOr(Uuid)),
  start_address: Schema.optionalKey(Schema.NullOr(AddressInput)),
  start_latitude: Schema.optionalKey(Schema.NullOr(Latitude)),
  start_longitude: Schema.optionalKey(Schema.NullOr(Longitude)),
  round_trip: Schema.optionalKey(Schema.Boolean),
  vehicle_id: Schema.optionalKey(Schema.NullOr(Uuid)),
  driver_id: Schema.optionalKey(Schema.NullOr(Uuid)),
  capacity_kg: Schema.optionalKey(Schema.NullOr(Thousandths(1_000_000))),
  capacity_parcels: Schema.optionalKey(Schema.NullOr(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1_000_000 })))),
  notes: optionalText(2000)
}

export const RouteCreate = Schema.Struct({
  ...routeInputFields,
  stops: Schema.optionalKey(Schema.Array(StopCreate).check(Schema.isMaxLength(MAX_STOPS)))
}).annotate({ identifier: "DeliveryRouteCreate" })
export type RouteCreate = typeof RouteCreate.Type

export const RouteUpdate = Schema.Struct({
  ...routeInputFields,
  name: Schema.optionalKey(routeInputFields.name),
  route_date: Schema.optionalKey(routeInputFields.route_date)
}).annotate({ identifier: "DeliveryRouteUpdate" })
export type RouteUpdate = typeof RouteUpdate.Type

export const StopOrder = Schema.Struct({
  stop_ids: Schema.Array(Uuid).check(Schema.isMinLength(1), Schema.isMaxLength(MAX_STOPS), Schema.isUnique())
}).annotate({ identifier: "DeliveryRouteStopOrder" })
export type StopOrder = typeof StopOrder.Type

/** The list filters as the API takes them: dates are read in the organization's time zone. */
export interface RouteListFilter {
  readonly status?: RouteStatus | undefined
  readonly date_from?: string | undefined
  readonly date_to?: string | undefined
}

/** The list filters as storage applies them: `route_date` within [from, before). */
export interface RouteFilter {
  readonly status?: RouteStatus | undefined
  readonly routeDateFrom?: string | undefined
  readonly routeDateBefore?: string | undefined
}
