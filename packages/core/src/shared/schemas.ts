import { Schema } from "effect"
import { currencyCodes } from "./currencies.ts"
import { DATE_MAX, DATE_MIN, INSTANT_MAX, INSTANT_MIN, isDateInRange, isInstantInRange } from "./limits.ts"

/** Field schemas shared by several resources. */

export const Uuid = Schema.String.check(Schema.isUUID())

/**
 * Whether an id can exist at all. Services look up only well-formed ids, so a
 * host calling core with a malformed one gets NotFound rather than a query the
 * database refuses.
 */
export const isUuid: (u: unknown) => u is string = Schema.is(Uuid)

const daysInMonth = (year: number, month: number): number =>
  month === 2 ? ((year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31

/** `YYYY-MM-DD` naming a day that exists (proleptic Gregorian; no February 30th). */
export const isCalendarDate = (s: string): boolean => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  if (!m) return false
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])]
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month)
}

/**
 * A calendar date `YYYY-MM-DD` that exists (no February 30th), years 0001 to
 * 9999 (`DATE_MIN`..`DATE_MAX`, the one date range of the API: docs/decisions.md,
 * "Limits and ranges"). Annotated before its check: annotations after a custom
 * check belong to the check, and the generated JSON Schema leaves them out.
 */
export const IsoDate = Schema.String.annotate({
  format: "date",
  description: `A date, YYYY-MM-DD, from ${DATE_MIN} to ${DATE_MAX}`
}).check(
  Schema.makeFilter((s: string) =>
    (isCalendarDate(s) && isDateInRange(s)) || `must be a calendar date in the form YYYY-MM-DD, from ${DATE_MIN} to ${DATE_MAX}`
  )
)

export const IsoDateTime = Schema.String.annotate({ format: "date-time" })

const instantPattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/

/** Whether a string is an instant the API accepts (see `Instant`). */
export const isInstant = (s: string): boolean => {
  const m = instantPattern.exec(s)
  return m !== null && Number(m[1]) >= 1 && isCalendarDate(`${m[1]}-${m[2]}-${m[3]}`) && Number(m[4]) < 24 &&
    Number(m[5]) < 60 && Number(m[6] ?? 0) < 60 && Number(m[7] ?? 0) < 24 && Number(m[8] ?? 0) < 60 &&
    isInstantInRange(Date.parse(s))
}

/**
 * An instant a caller sends: ISO 8601 with a date, a time and an offset
 * (`2026-03-02T07:00:00+02:00`, `…Z`), a real calendar date, whose UTC instant
 * lies within `INSTANT_MIN`..`INSTANT_MAX` — so its date stays within the date
 * range in every time zone (docs/decisions.md, "Limits and ranges"). Anything
 * else is a validation failure, never a value the database refuses.
 */
export const Instant = Schema.String.annotate({
  format: "date-time",
  description: `ISO 8601 date-time with an offset, from ${INSTANT_MIN} to ${INSTANT_MAX}`
}).check(
  Schema.makeFilter((s: string) =>
    isInstant(s) ||
    `must be an ISO 8601 date-time with an offset, e.g. 2026-03-02T07:00:00Z, from ${INSTANT_MIN} to ${INSTANT_MAX}`
  )
)

/** ISO 4217 alphabetic code of an active currency. */
export const CurrencyCode = Schema.String.check(
  Schema.makeFilter((s: string) => currencyCodes.has(s) || "must be an ISO 4217 currency code, e.g. EUR")
).annotate({ description: "ISO 4217 currency code", examples: ["EUR", "RON", "USD"] })

/**
 * `Schema.isPattern` that also states its pattern in the JSON Schema, so the
 * OpenAPI document shows it (Effect leaves a RegExp out by default) and the
 * fuzz suite aims at it. Every pattern here is linear (the regex linter,
 * `test/regexLint.test.ts`) and sits after a length bound where it has no
 * bounded quantifiers of its own.
 */
export const isPattern = (regExp: RegExp, annotations: Schema.Annotations.Filter = {}) =>
  Schema.isPattern(regExp, { toJsonSchema: () => ({ pattern: regExp.source }), ...annotations })

/** A decimal amount as a string with exactly two decimals, e.g. "1234.50". */
export const DecimalAmount = Schema.String.check(
  isPattern(/^(0|[1-9]\d{0,11})\.\d{2}$/, {
    message: "must be a decimal string with exactly two decimals, e.g. \"12.50\""
  })
).annotate({ description: "Decimal amount with exactly two decimals", examples: ["12.50"] })

/** How many characters a string has: Unicode code points, as people (and JSON Schema's maxLength) count them. */
export const characterCount = (s: string): number => {
  let n = 0
  for (const _ of s) n++
  return n
}

/**
 * Whether `s` has more than `max` characters. A string no longer than `max`
 * UTF-16 units never does, and one longer than `2 × max` always does (a
 * character takes at most two units): only the strings between are counted,
 * so the check costs at most `2 × max` steps whatever the string's length.
 */
export const exceedsCharacters = (s: string, max: number): boolean =>
  s.length > max && (s.length > 2 * max || characterCount(s) > max)

/**
 * At most `max` characters, counted as code points: 200 emoji are 200
 * characters, not the 400 UTF-16 units `isMaxLength` would count. Every
 * string length limit of the API is this check (decided: docs/decisions.md).
 * A string that fails it is refused at once: no check after it runs, so a
 * pattern only ever sees a string of bounded length.
 */
export const isMaxChars = (max: number) =>
  Schema.makeFilter((s: string) => !exceedsCharacters(s, max) || `must be at most ${max} characters`, {
    expected: `a string of at most ${max} characters`,
    toJsonSchema: () => ({ maxLength: max })
    // Aborting: with `errors: "all"` the checks after it (a pattern) never see a string that is too long.
  }, true)

/** A string of at most `max` characters. */
export const Text = (max: number) => Schema.String.check(isMaxChars(max))

/** A non-negative number with at most three decimals (kilograms to the gram, kilometres to the metre, litres to the millilitre). */
export const Thousandths = (maximum: number) =>
  Schema.Number.check(
    Schema.isBetween({ minimum: 0, maximum }),
    // Exactly a number of thousandths (what a decimal with at most three places parses to), so the
    // stored numeric(…, 3) is the value sent: 7e-12 or 0.1 + 0.2 are refused, not rounded to 0 or 0.3.
    Schema.makeFilter((n: number) => Math.round(n * 1000) / 1000 === n || "must have at most three decimals")
  )

export const NonBlankString = (max: number) =>
  Schema.String.check(
    // Stops at the first character that is not white space: no copy of a long string.
    Schema.makeFilter((s: string) => /\S/.test(s) || "must not be blank"),
    isMaxChars(max)
  )
