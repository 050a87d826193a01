import type { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import foundation from "./0001_foundation.ts"

/**
 * Every schema change, in order. Ids are spaced by area so parallel work does
 * not collide: 1-9 foundation, 10-19 delivery routes, 20-29 obligations,
 * 30-39 events and webhooks, 40-49 OAuth, 50-59 rate limits.
 */
export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_foundation": foundation
}
