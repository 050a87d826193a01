import { Context, Effect } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"
import { Errors, RateLimiter } from "@opsplatform/core"

export interface HeavyTierSettings {
  readonly limit: number
  readonly windowSeconds: number
}

/** The heavy rate tier: requests per window, per organization (both environments together). */
export class HeavyTier extends Context.Reference<HeavyTierSettings>(
  "@opsplatform/http-node/HeavyTier",
  { defaultValue: () => ({ limit: 30, windowSeconds: 60 }) }
) {}

const setHeader = (name: string, value: string) =>
  HttpEffect.appendPreResponseHandler((_request, response) => Effect.succeed(HttpServerResponse.setHeader(response, name, value)))

/**
 * The IETF `RateLimit-Policy` and `RateLimit` fields of a decision
 * (draft-ietf-httpapi-ratelimit-headers), and `Retry-After` when it refused.
 */
export const announceLimit = (
  policy: RateLimiter.RatePolicy,
  decision: Pick<RateLimiter.RateDecision, "allowed" | "remaining" | "resetSeconds">
) =>
  Effect.gen(function*() {
    yield* setHeader("ratelimit-policy", `"${policy.name}";q=${policy.limit};w=${policy.windowSeconds}`)
    yield* setHeader("ratelimit", `"${policy.name}";r=${decision.remaining};t=${decision.resetSeconds}`)
    if (!decision.allowed) yield* setHeader("retry-after", String(decision.resetSeconds))
  })

/** Announces a refusal a core service made with `policy` (its `RateLimited` error) in the response headers. */
export const announceRefusal = (policy: RateLimiter.RatePolicy) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.tapError(self, (e) =>
    e instanceof Errors.RateLimited
      ? announceLimit(policy, { allowed: false, remaining: 0, resetSeconds: e.retryAfterSec })
      : Effect.void)

/**
 * Counts a heavy request of the organization. Every answer carries the IETF
 * `RateLimit-Policy` and `RateLimit` fields; beyond the limit the request
 * fails with 429 `rate_limited`, `Retry-After` and `retryAfterSec` in the
 * error body.
 */
export const heavyTier = (
  limiter: RateLimiter.RateLimiter["Service"],
  tier: HeavyTierSettings,
  organizationId: string
) =>
  Effect.gen(function*() {
    const policy = { name: "heavy", limit: tier.limit, windowSeconds: tier.windowSeconds }
    const decision = yield* limiter.consume(`heavy:${organizationId}`, policy)
    yield* announceLimit(policy, decision)
    if (decision.allowed) return
    return yield* new Errors.RateLimited({
      retryAfterSec: decision.resetSeconds,
      limit: policy.limit,
      windowSec: policy.windowSeconds,
      policy: "the heavy tier"
    })
  })
