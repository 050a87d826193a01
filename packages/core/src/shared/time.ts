import { Clock, DateTime, Effect } from "effect"
import { DATE_MAX, INSTANT_MAX_MS, INSTANT_MIN, INSTANT_MIN_MS } from "./limits.ts"

/** Milliseconds since the epoch as ISO 8601 (UTC, millisecond precision). */
export const isoFromMillis = (ms: number): string => new Date(ms).toISOString()

/** The current instant as an ISO 8601 string (UTC, millisecond precision). */
export const nowIso: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, isoFromMillis)

/** A stored timestamp (a Date from the driver, or a string) as ISO 8601. */
export const toIso = (value: Date | string): string => typeof value === "string" ? new Date(value).toISOString() : value.toISOString()

/** A stored date (YYYY-MM-DD) as a string, whatever the driver returned. */
export const toDateString = (value: Date | string): string =>
  typeof value === "string" ? value.slice(0, 10) : value.toISOString().slice(0, 10)

const dateFormats = new Map<string, Intl.DateTimeFormat>()

/** The calendar date (YYYY-MM-DD) an instant falls on in a time zone (an organization's "today"). */
export const localDate = (epochMs: number, timeZone: string): string => {
  let formatter = dateFormats.get(timeZone)
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" })
    dateFormats.set(timeZone, formatter)
  }
  const fields = formatter.formatToParts(epochMs)
  const get = (type: string) => fields.find((p) => p.type === type)!.value
  return `${get("year").padStart(4, "0")}-${get("month")}-${get("day")}`
}

const hourFormats = new Map<string, Intl.DateTimeFormat>()

/** The hour of the day (0–23) an instant falls in, in a time zone (when an organization's daily job is due). */
export const localHour = (epochMs: number, timeZone: string): number => {
  let formatter = hourFormats.get(timeZone)
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat("en-GB", { timeZone, hour: "2-digit", hourCycle: "h23" })
    hourFormats.set(timeZone, formatter)
  }
  return Number(formatter.formatToParts(epochMs).find((p) => p.type === "hour")!.value)
}

/** The instant (ISO 8601, UTC) a calendar day (YYYY-MM-DD) starts in a time zone. */
export const dayStart = (date: string, timeZone: string): string => {
  const [year, month, day] = date.split("-").map(Number) as [number, number, number]
  const zoned = DateTime.makeZonedUnsafe({ year, month, day, hour: 0, minute: 0, second: 0, millisecond: 0 }, {
    timeZone,
    adjustForTimeZone: true
  })
  return DateTime.formatIso(DateTime.toUtc(zoned))
}

/** The calendar day after `date` (YYYY-MM-DD; the caller keeps it below DATE_MAX). */
export const nextDay = (date: string): string => {
  const [year, month, day] = date.split("-").map(Number) as [number, number, number]
  return DateTime.formatIsoDate(DateTime.add(DateTime.makeUnsafe({ year, month, day }), { days: 1 }))
}

const dayStartMillis = (date: string, timeZone: string): number => {
  const [year, month, day] = date.split("-").map(Number) as [number, number, number]
  return DateTime.toEpochMillis(DateTime.makeZonedUnsafe({ year, month, day, hour: 0, minute: 0, second: 0, millisecond: 0 }, {
    timeZone,
    adjustForTimeZone: true
  }))
}

/**
 * A filter on calendar days (`from`..`to`, both included, in a time zone) as
 * instants `[from, before)` within the instant range: a bound at or beyond an
 * end of the range is left out, as nothing stored lies beyond it
 * (docs/decisions.md, "Limits and ranges").
 */
export const dayRange = (
  from: string | undefined,
  to: string | undefined,
  timeZone: string
): { readonly from: string | undefined; readonly before: string | undefined } => {
  const start = from === undefined ? undefined : dayStartMillis(from, timeZone)
  const end = to === undefined || to >= DATE_MAX ? undefined : dayStartMillis(nextDay(to), timeZone)
  return {
    from: start === undefined ? undefined : start <= INSTANT_MIN_MS ? INSTANT_MIN : isoFromMillis(start),
    before: end === undefined || end > INSTANT_MAX_MS ? undefined : isoFromMillis(Math.max(end, INSTANT_MIN_MS))
  }
}
