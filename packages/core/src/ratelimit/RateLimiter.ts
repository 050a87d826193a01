import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { orDie } from "../shared/sql.ts"

/** A limit: at most `limit` requests in any span of `windowSeconds`, per key. */
export interface RatePolicy {
  /** Names the policy in the `RateLimit` / `RateLimit-Policy` headers, e.g. `heavy`. */
  readonly name: string
  readonly limit: number
  readonly windowSeconds: number
}

export interface RateDecision {
  readonly allowed: boolean
  readonly limit: number
  /** Requests the key may still make now, after this one. */
  readonly remaining: number
  /**
   * Seconds (at least 1) until the key may make one more request than now:
   * for a refusal, when the next request will be admitted.
   */
  readonly resetSeconds: number
}

const secondsUntil = (atMs: number, nowMs: number) => Math.max(1, Math.ceil((atMs - nowMs) / 1000))

/**
 * The sliding log (docs/decisions.md, "Rate limits"): a key's admitted
 * requests are kept with their times, and a request is admitted only while
 * fewer than `limit` of them fall in the last `windowSeconds` — (now − window,
 * now]. No span of the window's length ever holds more than the limit, across
 * any clock boundary. Returns the decision and the log to keep (times in the
 * window, ascending).
 */
export const slidingLog = (
  hits: ReadonlyArray<number>,
  nowMs: number,
  policy: RatePolicy
): { readonly decision: RateDecision; readonly hits: ReadonlyArray<number> } => {
  const windowMs = policy.windowSeconds * 1000
  const live = hits.filter((t) => t > nowMs - windowMs).sort((a, b) => a - b)
  if (live.length >= policy.limit) {
    // The request after this one waits for enough of the window to slide past: the entry
    // `limit` places from the newest leaves it first.
    const frees = live[live.length - policy.limit]! + windowMs
    return {
      decision: { allowed: false, limit: policy.limit, remaining: 0, resetSeconds: secondsUntil(frees, nowMs) },
      hits: live
    }
  }
  const next = [...live, nowMs]
  return {
    decision: {
      allowed: true,
      limit: policy.limit,
      remaining: policy.limit - next.length,
      resetSeconds: secondsUntil(next[0]! + windowMs, nowMs)
    },
    hits: next
  }
}

/** The log after giving back one admitted request: the newest entry still in the window goes. */
export const withoutNewest = (hits: ReadonlyArray<number>, nowMs: number, policy: RatePolicy): ReadonlyArray<number> => {
  const live = hits.filter((t) => t > nowMs - policy.windowSeconds * 1000).sort((a, b) => a - b)
  return live.slice(0, -1)
}

/** Keys are swept this often (in consumes per process) once their last window has passed. */
const SWEEP_EVERY = 1_000

/**
 * Limits requests per key with an exact sliding window (a sliding log): the
 * limit holds over every span of the window's length, not per clock-aligned
 * window, so a burst just before a minute boundary and another just after it
 * cannot add up to twice the limit. A refused request does not count. The
 * current time comes from `Clock`.
 */
export class RateLimiter extends Context.Service<RateLimiter, {
  readonly consume: (key: string, policy: RatePolicy) => Effect.Effect<RateDecision>
  /**
   * Gives back one admitted request still in the window, for policies that
   * count only failures: consume first (so concurrent attempts cannot pass the
   * limit together), refund when the attempt succeeds. A no-op once the
   * request has left the window.
   */
  readonly refund: (key: string, policy: RatePolicy) => Effect.Effect<void>
}>()("@opsplatform/core/ratelimit/RateLimiter") {
  /** One process: each key's log in memory. */
  static readonly layerMemory: Layer.Layer<RateLimiter> = Layer.sync(RateLimiter, () => {
    const logs = new Map<string, { hits: ReadonlyArray<number>; expiresMs: number }>()
    let consumed = 0
    const sweep = (now: number) => {
      for (const [key, log] of logs) if (log.expiresMs <= now) logs.delete(key)
    }
    return RateLimiter.of({
      consume: (key, policy) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          if (++consumed % SWEEP_EVERY === 0) sweep(now)
          const current = logs.get(key)
          const { decision, hits } = slidingLog(current?.hits ?? [], now, policy)
          if (decision.allowed) {
            logs.set(key, { hits, expiresMs: Math.max(current?.expiresMs ?? 0, now + policy.windowSeconds * 1000) })
          }
          return decision
        }),
      refund: (key, policy) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          const current = logs.get(key)
          if (current !== undefined) logs.set(key, { ...current, hits: withoutNewest(current.hits, now, policy) })
        })
    })
  })

  /**
   * Many processes on one PostgreSQL: one row per key holds its log (the
   * admitted times in milliseconds), advanced by a single atomic upsert that
   * drops the times that left the window and appends the new one only while
   * fewer than the limit remain — so the processes together never admit more
   * than the limit in any window-long span.
   */
  static readonly layerSql: Layer.Layer<RateLimiter, never, SqlClient.SqlClient> = Layer.effect(
    RateLimiter,
    Effect.map(SqlClient.SqlClient, (sql) => {
      let consumed = 0
      const parse = (text: string | null | undefined): Array<number> =>
        text === null || text === undefined || text === "" ? [] : text.split(",").map(Number)
      const readLog = (key: string) =>
        orDie(sql<{ readonly hits: string }>`SELECT array_to_string(hits, ',') AS hits FROM rate_limit_logs WHERE key = ${key}`)
          .pipe(Effect.map((rows) => parse(rows[0]?.hits)))
      const sweep = (now: number) => orDie(sql`DELETE FROM rate_limit_logs WHERE expires_ms <= ${now}`).pipe(Effect.asVoid)
      return RateLimiter.of({
        consume: (key, policy) =>
          Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            if (++consumed % SWEEP_EVERY === 0) yield* sweep(now)
            const windowMs = policy.windowSeconds * 1000
            const cutoff = now - windowMs
            const rows = yield* orDie(sql<{ readonly hits: string }>`INSERT INTO rate_limit_logs AS l (key, hits, expires_ms)
              VALUES (${key}, ARRAY[${now}::bigint], ${now + windowMs})
              ON CONFLICT (key) DO UPDATE SET
                hits = ARRAY(SELECT h FROM unnest(l.hits) AS h WHERE h > ${cutoff} ORDER BY h) || ${now}::bigint,
                expires_ms = GREATEST(l.expires_ms, EXCLUDED.expires_ms)
              WHERE (SELECT count(*) FROM unnest(l.hits) AS h WHERE h > ${cutoff}) < ${policy.limit}
              RETURNING array_to_string(hits, ',') AS hits`)
            if (rows.length > 0) {
              // Admitted: the log as stored now includes this request.
              const hits = parse(rows[0]!.hits)
              return slidingLog(hits.slice(0, -1), now, policy).decision
            }
            // Refused: read the log to say when the next request is admitted (a log that slid
            // free in between still answers with the shortest wait).
            const { decision } = slidingLog(yield* readLog(key), now, policy)
            return decision.allowed ? { allowed: false, limit: policy.limit, remaining: 0, resetSeconds: 1 } : decision
          }),
        refund: (key, policy) =>
          Effect.gen(function*() {
            const cutoff = (yield* Clock.currentTimeMillis) - policy.windowSeconds * 1000
            yield* orDie(sql`UPDATE rate_limit_logs SET hits = ARRAY(
                SELECT h FROM (SELECT h, row_number() OVER (ORDER BY h DESC) AS newest
                  FROM unnest(hits) AS h WHERE h > ${cutoff}) AS live
                WHERE newest > 1 ORDER BY h)
              WHERE key = ${key}`)
          })
      })
    })
  )
}
