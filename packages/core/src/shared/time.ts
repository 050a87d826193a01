import { Clock, Effect } from "effect"

/** Milliseconds since the epoch as ISO 8601 (UTC, millisecond precision). */
export const isoFromMillis = (ms: number): string => new Date(ms).toISOString()

/** The current instant as an ISO 8601 string (UTC, millisecond precision). */
export const nowIso: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, isoFromMillis)

/** A stored timestamp (a Date from the driver, or a string) as ISO 8601. */
export const toIso = (value: Date | string): string => typeof value === "string" ? new Date(value).toISOString() : value.toISOString()

export const toIsoOrNull = (value: Date | string | null | undefined): string | null =>
  value === null || value === undefined ? null : toIso(value)

/** A stored date (YYYY-MM-DD) as a string, whatever the driver returned. */
export const toDateString = (value: Date | string): string =>
  typeof value === "string" ? value.slice(0, 10) : value.toISOString().slice(0, 10)
