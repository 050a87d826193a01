/**
 * The ranges every value the API accepts must stay within, in one place: the
 * schemas check them, the services respect them when they compute a date, and
 * the fuzz suite reads them to aim at the edges. The table in
 * docs/decisions.md ("Limits and ranges") lists the same figures.
 */

/** Calendar dates: years 0001 to 9999 (PostgreSQL has no year 0; five-digit years have no ISO 8601 form without a sign). */
export const DATE_MIN = "0001-01-01"
export const DATE_MAX = "9999-12-31"

/**
 * Instants: the date range shrunk by a day at each end, so the calendar date
 * of an accepted instant stays within DATE_MIN..DATE_MAX in every time zone
 * (offsets reach ±14 h) — an organization's local date of it always exists.
 */
export const INSTANT_MIN = "0001-01-02T00:00:00.000Z"
export const INSTANT_MAX = "9999-12-30T23:59:59.999Z"
export const INSTANT_MIN_MS = Date.parse(INSTANT_MIN)
export const INSTANT_MAX_MS = Date.parse(INSTANT_MAX)

/** Whether epoch milliseconds fall within INSTANT_MIN..INSTANT_MAX. */
export const isInstantInRange = (ms: number): boolean => ms >= INSTANT_MIN_MS && ms <= INSTANT_MAX_MS

/** Whether a date string (a calendar date, however many year digits) is `YYYY-MM-DD` within DATE_MIN..DATE_MAX. */
export const isDateInRange = (date: string): boolean => /^\d{4}-/.test(date) && date >= DATE_MIN && date <= DATE_MAX

/** Request bodies: at most this many bytes (413 above). */
export const MAX_BODY_BYTES = 1024 * 1024

/** JSON bodies: at most this many nested arrays and objects (400 deeper). */
export const MAX_JSON_DEPTH = 64

/** Lists: `perPage` 1..MAX_PER_PAGE, `page` 1..MAX_PAGE. */
export const MAX_PER_PAGE = 100
export const MAX_PAGE = 1_000_000

/** Amounts ("1234.50"): at most 12 integer digits, so minor units stay far inside 2^53 (money.ts). */
export const MAX_AMOUNT_INTEGER_DIGITS = 12

/** Event payloads: at most 256 KiB (a webhook body). */
export const MAX_EVENT_PAYLOAD_BYTES = 256 * 1024
