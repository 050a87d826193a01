import { Schema, SchemaTransformation } from "effect"
import { toIso } from "./time.ts"

/**
 * How stored columns read back and write. A row schema is the record's schema
 * with these in place of the fields whose stored form differs: the driver
 * returns a `Date` for a timestamptz, a string for a numeric, a parsed value
 * for a jsonb; the record holds an ISO string, a number, the typed value.
 */

/** A timestamptz column, held as ISO 8601 (UTC, millisecond precision). */
export const Timestamp = Schema.Union([Schema.Date, Schema.String]).pipe(
  Schema.decodeTo(Schema.String, SchemaTransformation.transform<string, string | Date>({ decode: toIso, encode: (iso) => iso }))
)

export const NullableTimestamp = Schema.NullOr(Timestamp)

/** A numeric or bigint column, held as a JavaScript number. */
export const Numeric = Schema.Union([Schema.Number, Schema.String, Schema.BigInt]).pipe(
  Schema.decodeTo(Schema.Number, SchemaTransformation.transform<number, string | number | bigint>({ decode: Number, encode: (n) => n }))
)

export const NullableNumeric = Schema.NullOr(Numeric)

/** A jsonb column: the driver parses it when read; it is written as JSON text. */
export const Json = <S extends Schema.Top>(schema: S) =>
  Schema.Unknown.pipe(
    Schema.decodeTo(
      schema,
      SchemaTransformation.transform<S["Encoded"], unknown>({
        decode: (value) => value as S["Encoded"],
        encode: (value) => JSON.stringify(value)
      })
    )
  )

/** A text column holding space-separated words (scopes, grant types), held as the list of words. */
export const SpaceSeparated = Schema.String.pipe(
  Schema.decodeTo(
    Schema.Array(Schema.String),
    SchemaTransformation.transform({
      decode: (text: string): ReadonlyArray<string> => text.split(" ").filter((s) => s !== ""),
      encode: (words: ReadonlyArray<string>) => words.join(" ")
    })
  )
)
