import { addDays, daysBetween } from "../../obligations/rules.ts"
import type { Period } from "./intents.ts"

/**
 * Calendar periods in the organization's time zone, on YYYY-MM-DD dates
 * (docs/decisions.md, "Wall displays"): a day; a week from Monday (as the
 * Romanian calendar counts it); a month from its first day. A figure over
 * seven periods is read through the eight boundaries between them.
 */
export type Grain = "day" | "week" | "month"

/** How many periods a spark shows. */
export const SPARK_LENGTH = 7

/** 0 for Monday … 6 for Sunday (1970-01-01 was a Thursday). */
export const weekday = (date: string): number => (((daysBetween("1970-01-01", date) + 3) % 7) + 7) % 7

const addMonths = (firstOfMonth: string, months: number): string => {
  const index = Number(firstOfMonth.slice(0, 4)) * 12 + Number(firstOfMonth.slice(5, 7)) - 1 + months
  const year = Math.floor(index / 12)
  return `${String(year).padStart(4, "0")}-${String(index - year * 12 + 1).padStart(2, "0")}-01`
}

/** The first day of the period of `grain` that holds `date`. */
export const startOf = (date: string, grain: Grain): string =>
  grain === "day" ? date : grain === "week" ? addDays(date, -weekday(date)) : `${date.slice(0, 7)}-01`

/** The start of the period `n` periods after the one starting at `start`. */
export const shift = (start: string, grain: Grain, n: number): string =>
  grain === "day" ? addDays(start, n) : grain === "week" ? addDays(start, 7 * n) : addMonths(start, n)

/** The grain of an asked period, and the first day of that period. */
export const periodStart = (period: Period, today: string): { readonly grain: Grain; readonly start: string } => {
  switch (period) {
    case "today":
      return { grain: "day", start: today }
    case "week":
      return { grain: "week", start: startOf(today, "week") }
    case "month":
      return { grain: "month", start: startOf(today, "month") }
    case "last_month":
      return { grain: "month", start: shift(startOf(today, "month"), "month", -1) }
  }
}

/**
 * The boundaries of the `SPARK_LENGTH` periods of `grain` that end with the
 * one starting at `start`: b0 < b1 < … < b7, period i being [b(i−1), b(i)).
 * The last period stops after today (`end` = tomorrow), so a period still
 * running is read "so far" and never counts a date in the future.
 */
export const sparkBoundaries = (start: string, grain: Grain, end: string): ReadonlyArray<string> => {
  const bounds = Array.from({ length: SPARK_LENGTH + 1 }, (_, i) => shift(start, grain, i - SPARK_LENGTH + 1))
  bounds[SPARK_LENGTH] = bounds[SPARK_LENGTH]! < end ? bounds[SPARK_LENGTH]! : end
  return bounds
}

/** The bucket of a value among boundaries, as SQL's `width_bucket(value, boundaries)` numbers it: 0 below b0, i for [b(i−1), b(i)), n+1 from the last. */
export const bucketOf = (value: string, boundaries: ReadonlyArray<string>): number => {
  let bucket = 0
  while (bucket < boundaries.length && value >= boundaries[bucket]!) bucket++
  return bucket
}
