import { Schema, Struct } from "effect"
import { QueryBoolean } from "../shared/filters.ts"
import { isMaxChars, IsoDateTime, isPattern, NonBlankString, Uuid } from "../shared/schemas.ts"

export const LocationId = Uuid.pipe(Schema.brand("LocationId"))
export type LocationId = typeof LocationId.Type

/** The kinds of site an organization runs (decided: docs/decisions.md). */
export const VerticalType = Schema.Literals([
  "retail",
  "restaurant",
  "warehouse",
  "office",
  "manufacturing",
  "healthcare",
  "hospitality",
  "services",
  "other"
])
export type VerticalType = typeof VerticalType.Type

const Code = Schema.String.check(
  isPattern(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$/, {
    message: "must be 1 to 40 letters, digits, '.', '_' or '-', starting with a letter or digit"
  })
)
const Latitude = Schema.Number.check(Schema.isBetween({ minimum: -90, maximum: 90 }))
const Longitude = Schema.Number.check(Schema.isBetween({ minimum: -180, maximum: 180 }))

export const Location = Schema.Struct({
  id: LocationId,
  name: NonBlankString(200),
  code: Schema.NullOr(Code),
  vertical_type: VerticalType,
  is_primary: Schema.Boolean,
  address: Schema.NullOr(Schema.String.check(isMaxChars(500))),
  latitude: Schema.NullOr(Latitude),
  longitude: Schema.NullOr(Longitude),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "Location" })
export type Location = typeof Location.Type

/** What a caller may set: every field but the id and the timestamps. */
const Editable = Location.mapFields(
  Struct.pick(["name", "code", "vertical_type", "is_primary", "address", "latitude", "longitude"])
)

/** Only the name is required; the rest default (no code, `other`, not primary, no address or position). */
export const LocationCreate = Editable.mapFields(Struct.mapOmit(["name"], Schema.optionalKey)).annotate({
  identifier: "LocationCreate"
})
export type LocationCreate = typeof LocationCreate.Type

export const LocationUpdate = Editable.mapFields(Struct.map(Schema.optionalKey)).annotate({ identifier: "LocationUpdate" })
export type LocationUpdate = typeof LocationUpdate.Type

export const LocationFilter = Schema.Struct({
  vertical_type: Schema.optionalKey(VerticalType),
  is_primary: Schema.optionalKey(QueryBoolean)
})
export type LocationFilter = typeof LocationFilter.Type
