import { Clock, Context, DateTime, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { orDie } from "../shared/sql.ts"

/** A limit: at most `limit` requests per fixed window of `windowSeconds`, per key. */
export interface RatePolicy {
  /** Names the policy in the `RateLimit` / `RateLimit-Policy` headers, e.g. `heavy`. */
  readonly name: string
  readonly limit: number
  readonly windowSeconds: number
}

export interface RateDecision {
  readonly allowed: boolean
  readonly limit: number
  /** Requests left in the current window after this one. */
  readonly remaining: number
  /** Seconds until the current window ends (at least 1). */
  readonly resetSeconds: number
}

/** Where the current window starts and how far away its end is. */
export const windowOf = (nowMs: number, policy: RatePolicy) => {
  const size = policy.windowSeconds * 1000
  const start = Math.floor(nowMs / size) * size
  return { start, resetSeconds: Math.max(1, Math.ceil((start + size - nowMs) / 1000)) }
}

/**
 * Counts requests per key in fixed windows aligned to the epoch. A refused
 * request does not count, so a client that keeps retrying is admitted again as
 * soon as the window turns. The current time comes from `Clock`.
 */
export class RateLimiter extends Context.Service<RateLimiter, {
  readonly consume: (key: string, policy: RatePolicy) => Effect.Effect<RateDecision>
}>()("@opsplatform/core/ratelimit/RateLimiter") {
  /** One process: counters in memory. */
  static readonly layerMemory: Layer.Layer<RateLimiter> = Layer.sync(RateLimiter, () => {
    const windows = new Map<string, { start: number; count: number }>()
    const sweep = (now: number) => {
      // Keys whose window ended a day ago are dropped so the map stays bounded by active keys.
      for (const [key, w] of windows) if (w.start < now - 86_400_000) windows.delete(key)
    }
    return RateLimiter.of({
      consume: (key, policy) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          const { resetSeconds, start } = windowOf(now, policy)
          if (windows.size > 10_000) sweep(now)
          const current = windows.get(key)
          const count = current === undefined || current.start < start ? 0 : current.count
          const windowStart = current === undefined ? start : Math.max(current.start, start)
          if (count >= policy.limit) return { allowed: false, limit: policy.limit, remaining: 0, resetSeconds }
          windows.set(key, { start: windowStart, count: count + 1 })
          return { allowed: true, limit: policy.limit, remaining: policy.limit - count - 1, resetSeconds }
        })
    })
  })

  /**
   * Many processes on one PostgreSQL: one row per key holds the current window
   * and its count, advanced by a single atomic upsert that admits a request
   * only while the count is below the limit, so the processes together never
   * admit more than the limit in a window.
   */
  static readonly layerSql: Layer.Layer<RateLimiter, never, SqlClient.SqlClient> = Layer.effect(
    RateLimiter,
    Effect.map(SqlClient.SqlClient, (sql) =>
      RateLimiter.of({
        consume: (key, policy) =>
          Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            const { resetSeconds, start } = windowOf(now, policy)
            const rows = yield* orDie(sql`INSERT INTO rate_limit_counters (key, window_start, count)
              VALUES (${key}, ${DateTime.formatIso(DateTime.makeUnsafe(start))}, 1)
              ON CONFLICT (key) DO UPDATE SET
                count = CASE WHEN rate_limit_counters.window_start < EXCLUDED.window_start THEN 1
                  ELSE rate_limit_counters.count + 1 END,
                window_start = GREATEST(rate_limit_counters.window_start, EXCLUDED.window_start)
              WHERE rate_limit_counters.window_start < EXCLUDED.window_start
                OR rate_limit_counters.count < ${policy.limit}
              RETURNING count`)
            const row = rows[0] as { count: number } | undefined
            return row === undefined
              ? { allowed: false, limit: policy.limit, remaining: 0, resetSeconds }
              : { allowed: true, limit: policy.limit, remaining: Math.max(0, policy.limit - Number(row.count)), resetSeconds }
          })
      }))
  )
}
