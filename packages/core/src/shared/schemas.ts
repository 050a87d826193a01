import { Schema } from "effect"
import { currencyCodes } from "./currencies.ts"

/** Field schemas shared by several resources. */

export const Uuid = Schema.String.check(Schema.isUUID())

/**
 * Whether an id can exist at all. Services look up only well-formed ids, so a
 * host calling core with a malformed one gets NotFound rather than a query the
 * database refuses.
 */
export const isUuid: (u: unknown) => u is string = Schema.is(Uuid)

const isCalendarDate = (s: string): boolean => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  if (!m) return false
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])))
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3])
}

/** A calendar date `YYYY-MM-DD` that exists (no February 30th). */
export const IsoDate = Schema.String.check(
  Schema.makeFilter((s: string) => isCalendarDate(s) || "must be a calendar date in the form YYYY-MM-DD")
).annotate({ format: "date", description: "A date, YYYY-MM-DD" })

export const IsoDateTime = Schema.String.annotate({ format: "date-time" })

/** ISO 4217 alphabetic code of an active currency. */
export const CurrencyCode = Schema.String.check(
  Schema.makeFilter((s: string) => currencyCodes.has(s) || "must be an ISO 4217 currency code, e.g. EUR")
).annotate({ description: "ISO 4217 currency code", examples: ["EUR", "RON", "USD"] })

/** A decimal amount as a string with exactly two decimals, e.g. "1234.50". */
export const DecimalAmount = Schema.String.check(
  Schema.isPattern(/^(0|[1-9]\d{0,11})\.\d{2}$/, {
    message: "must be a decimal string with exactly two decimals, e.g. \"12.50\""
  })
).annotate({ description: "Decimal amount with exactly two decimals", examples: ["12.50"] })

export const NonBlankString = (max: number) =>
  Schema.String.check(
    Schema.makeFilter((s: string) => s.trim().length > 0 || "must not be blank"),
    Schema.isMaxLength(max)
  )
