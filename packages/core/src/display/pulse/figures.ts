import { currencyExponent, roundHalfEven } from "../../shared/money.ts"
import { dayStart } from "../../shared/time.ts"
import { addDays } from "../../obligations/rules.ts"
import type { Intent, Topic } from "./intents.ts"
import { periodStart, shift, SPARK_LENGTH, sparkBoundaries, startOf } from "./periods.ts"

/**
 * What each figure is read from (docs/decisions.md, "Wall displays"). Every
 * measure is one SQL aggregate over one table, grouped by the bucket its date
 * falls in and, for money, by currency:
 *
 * - `invoiced`: issued invoices (SENT, PARTIALLY_PAID, PAID, CREDITED) by issue
 *   date, net of credit notes (`total − credited`).
 * - `collected`: payments not reversed, by payment date.
 * - `open_by_due_date` / `open_by_issue_date`: what is left to collect on open
 *   invoices (SENT, PARTIALLY_PAID), `max(0, total − credited − paid)`.
 * - `expenses`: submitted, approved and paid expenses by expense date.
 * - `obligations_pending` / `obligations_due`: pending, and not cancelled,
 *   contract obligations by due date (counts).
 * - `routes_scheduled` / `routes_in_progress` / `routes_completed`: routes not
 *   cancelled and in progress by route date, completed ones by completion time
 *   (counts; the boundaries are instants).
 * - `vehicles_active`: active fleet vehicles by when they were registered
 *   (counts; instants).
 *
 * Amounts come back as integer sums of minor units per currency and exchange
 * rate (an invoice's `exchange_rate_ron`, fixed at issue; none for RON), so
 * the database adds integers only; `Σ minor × rate` per currency is then
 * turned into RON minor units once, half to even. Expenses carry no exchange
 * rate: only RON expenses are summed, the others are counted apart.
 */
export const measures = [
  "invoiced",
  "collected",
  "open_by_due_date",
  "open_by_issue_date",
  "expenses",
  "obligations_pending",
  "obligations_due",
  "routes_scheduled",
  "routes_in_progress",
  "routes_completed",
  "vehicles_active"
] as const
export type Measure = (typeof measures)[number]

/** Measures whose boundaries are instants rather than dates. */
export const instantMeasures: ReadonlySet<Measure> = new Set([
  "routes_scheduled",
  "routes_in_progress",
  "routes_completed",
  "vehicles_active"
])

/** Measures that are counts only. */
export const countMeasures: ReadonlySet<Measure> = new Set([
  "obligations_pending",
  "obligations_due",
  "routes_scheduled",
  "routes_in_progress",
  "routes_completed",
  "vehicles_active"
])

/**
 * One group of an aggregate: the bucket (numbered as SQL's `width_bucket`),
 * the currency and its exchange rate to RON, Σ minor units, how many rows.
 */
export interface BucketSum {
  readonly bucket: number
  /** Empty for counts. */
  readonly currency: string
  /** RON for one unit of the currency (a decimal string, up to 6 decimals); null for RON and counts. */
  readonly rate: string | null
  /** Σ minor units of the currency, an integer as a string ("0" for counts). */
  readonly minor: string
  readonly count: number
}

/**
 * How a series is read from its buckets. `flow`: only the seven periods count
 * (the query is bounded by them). `past`: a state as of now, split by age —
 * what is older than the first boundary joins the first period, what is at or
 * after the last boundary is not part of it. `all`: the same, but what is at or
 * after the last boundary joins the last period.
 */
export type SeriesMode = "flow" | "past" | "all"

export interface Query {
  readonly measure: Measure
  readonly boundaries: ReadonlyArray<string>
  readonly mode: SeriesMode
}

/** The queries behind a topic: the series, and for one topic the count it reports, read apart. */
export interface Plan {
  readonly series: Query
  readonly count?: Query | undefined
}

/** A figure's series over the seven periods, oldest first. */
export interface Series {
  /** RON minor units per period (zero for counts). */
  readonly money: ReadonlyArray<number>
  readonly counts: ReadonlyArray<number>
  /** Rows per period in currencies that cannot be turned into RON (expenses). */
  readonly unconverted: ReadonlyArray<number>
}

/** Exchange rates have at most 6 decimals: Σ minor × rate is kept exactly as units of 10⁻⁶. */
const RATE_SCALE = 6

const rateUnits = (rate: string | null): bigint => {
  if (rate === null) return 10n ** BigInt(RATE_SCALE)
  const match = /^(\d+)(?:\.(\d{1,6}))?$/.exec(rate)
  if (match === null) throw new RangeError(`Not an exchange rate: ${rate}`)
  return BigInt(match[1]! + (match[2] ?? "").padEnd(RATE_SCALE, "0"))
}

/** `Σ minor × rate` of one currency (units of 10⁻⁶) as RON minor units, rounded once, half to even. */
const ronMinor = (scaled: bigint, currency: string): number => {
  const shiftBy = 2 - currencyExponent(currency)
  return roundHalfEven(scaled * 10n ** BigInt(Math.max(0, shiftBy)), 10 ** (RATE_SCALE + Math.max(0, -shiftBy)))
}

/** Σ minor units of a currency at one rate, in RON minor units. */
export const ronMinorOf = (minor: bigint, rate: string | null, currency: string): number =>
  ronMinor(minor * rateUnits(rate), currency)

const week = (today: string) => startOf(today, "week")

/** The queries that answer a topic on `today` in `timeZone`. */
export const planFor = (intent: Intent, today: string, timeZone: string): Plan => {
  const tomorrow = addDays(today, 1)
  const weeks = (end: string) => [...sparkBoundaries(week(today), "week", addDays(week(today), 7)).slice(0, -1), end]
  const days = sparkBoundaries(today, "day", tomorrow).map((d) => dayStart(d, timeZone))
  const flow = (measure: Measure): Query => {
    const { grain, start } = periodStart(intent.period ?? "month", today)
    return { measure, boundaries: sparkBoundaries(start, grain, tomorrow), mode: "flow" }
  }
  const topic: Topic = intent.topic
  switch (topic) {
    case "invoiced":
    case "collected":
    case "expenses":
      return { series: flow(topic) }
    case "invoices_overdue":
      return { series: { measure: "open_by_due_date", boundaries: weeks(today), mode: "past" } }
    case "open_balance": {
      const month = startOf(today, "month")
      return {
        series: {
          measure: "open_by_issue_date",
          boundaries: sparkBoundaries(month, "month", shift(month, "month", 1)),
          mode: "all"
        }
      }
    }
    case "obligations_open":
      return { series: { measure: "obligations_pending", boundaries: weeks(addDays(week(today), 7)), mode: "all" } }
    case "obligations_overdue":
      return { series: { measure: "obligations_pending", boundaries: weeks(today), mode: "past" } }
    case "obligations_due_week":
      return {
        series: { measure: "obligations_due", boundaries: weeks(addDays(week(today), 7)), mode: "flow" },
        count: { measure: "obligations_pending", boundaries: [today, addDays(week(today), 7)], mode: "flow" }
      }
    case "routes_today":
      return { series: { measure: "routes_scheduled", boundaries: days, mode: "flow" } }
    case "routes_in_progress":
      return { series: { measure: "routes_in_progress", boundaries: days, mode: "all" } }
    case "routes_completed_today":
      return { series: { measure: "routes_completed", boundaries: days, mode: "flow" } }
    case "vehicles_active":
      // The fleet as of now, split by the week each vehicle was registered in (older ones in the first).
      return {
        series: {
          measure: "vehicles_active",
          boundaries: weeks(addDays(week(today), 7)).map((d) => dayStart(d, timeZone)),
          mode: "all"
        }
      }
  }
}

/** The period (0 … 6) a bucket counts in, or undefined when it is outside the series. */
const periodIndex = (bucket: number, mode: SeriesMode): number | undefined => {
  if (bucket >= 1 && bucket <= SPARK_LENGTH) return bucket - 1
  if (bucket === 0 && mode !== "flow") return 0
  if (bucket > SPARK_LENGTH && mode === "all") return SPARK_LENGTH - 1
  return undefined
}

/**
 * Folds an aggregate's groups into the seven periods of a series: per period
 * and currency, `Σ minor × rate` exactly, then each turned into RON once.
 */
export const seriesOf = (rows: ReadonlyArray<BucketSum>, query: Query): Series => {
  const counts = Array.from({ length: SPARK_LENGTH }, () => 0)
  const unconverted = Array.from({ length: SPARK_LENGTH }, () => 0)
  const scaled = Array.from({ length: SPARK_LENGTH }, () => new Map<string, bigint>())
  const count = countMeasures.has(query.measure)
  for (const row of rows) {
    const i = periodIndex(row.bucket, query.mode)
    if (i === undefined) continue
    if (query.measure === "expenses" && row.currency !== "RON") {
      unconverted[i]! += row.count
      continue
    }
    counts[i]! += row.count
    if (!count) {
      const period = scaled[i]!
      period.set(row.currency, (period.get(row.currency) ?? 0n) + BigInt(row.minor) * rateUnits(row.rate))
    }
  }
  const money = scaled.map((period) => [...period].reduce((sum, [currency, units]) => sum + ronMinor(units, currency), 0))
  return { money, counts, unconverted }
}
