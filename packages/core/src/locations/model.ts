import { Schema } from "effect"
import { IsoDateTime, NonBlankString } from "../shared/schemas.ts"

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

export const Location = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  code: Schema.NullOr(Schema.String),
  vertical_type: VerticalType,
  is_primary: Schema.Boolean,
  address: Schema.NullOr(Schema.String),
  latitude: Schema.NullOr(Schema.Number),
  longitude: Schema.NullOr(Schema.Number),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "Location" })
export type Location = typeof Location.Type

const Code = Schema.String.check(
  Schema.isPattern(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$/, {
    message: "must be 1 to 40 letters, digits, '.', '_' or '-', starting with a letter or digit"
  })
)
const Latitude = Schema.Number.check(Schema.isBetween({ minimum: -90, maximum: 90 }))
const Longitude = Schema.Number.check(Schema.isBetween({ minimum: -180, maximum: 180 }))

export const LocationCreate = Schema.Struct({
  name: NonBlankString(200),
  code: Schema.optionalKey(Schema.NullOr(Code)),
  vertical_type: Schema.optionalKey(VerticalType),
  is_primary: Schema.optionalKey(Schema.Boolean),
  address: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(500)))),
  latitude: Schema.optionalKey(Schema.NullOr(Latitude)),
  longitude: Schema.optionalKey(Schema.NullOr(Longitude))
}).annotate({ identifier: "LocationCreate" })
export type LocationCreate = typeof LocationCreate.Type

export const LocationUpdate = Schema.Struct({
  name: Schema.optionalKey(NonBlankString(200)),
  code: Schema.optionalKey(Schema.NullOr(Code)),
  vertical_type: Schema.optionalKey(VerticalType),
  is_primary: Schema.optionalKey(Schema.Boolean),
  address: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(500)))),
  latitude: Schema.optionalKey(Schema.NullOr(Latitude)),
  longitude: Schema.optionalKey(Schema.NullOr(Longitude))
}).annotate({ identifier: "LocationUpdate" })
export type LocationUpdate = typeof LocationUpdate.Type

export interface LocationFilter {
  readonly vertical_type?: VerticalType | undefined
  readonly is_primary?: boolean | undefined
}
