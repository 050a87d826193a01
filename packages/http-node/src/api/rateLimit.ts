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
 * Counts a heavy request of the organization. Every answer carries the IETF
 * `RateLimit-Policy` and `RateLimit` fields (draft-ietf-httpapi-ratelimit-headers);
 * beyond the limit the request fails with 429 `rate_limited`, `Retry-After`
 * and `retryAfterSec` in the error body.
 */
export const heavyTier = (
  limiter: RateLimiter.RateLimiter["Service"],
  tier: HeavyTierSettings,
  organizationId: string
) =>
  Effect.gen(function*() {
    const policy = { name: "heavy", limit: tier.limit, windowSeconds: tier.windowSeconds }
    const decision = yield* limiter.consume(`heavy:${organizationId}`, policy)
    yield* setHeader("ratelimit-policy", `"${policy.name}";q=${policy.limit};w=${policy.windowSeconds}`)
    yield* setHeader("ratelimit", `"${policy.name}";r=${decision.remaining};t=${decision.resetSeconds}`)
    if (decision.allowed) return
    yield* setHeader("retry-after", String(decision.resetSeconds))
    return yield* new Errors.RateLimited({
      retryAfterSec: decision.resetSeconds,
      limit: policy.limit,
      windowSec: policy.windowSeconds,
      policy: "the heavy tier"
    })
  })
