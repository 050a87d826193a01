import { Context } from "effect"
import type { RatePolicy } from "../ratelimit/RateLimiter.ts"

const DAY = 24 * 60 * 60

/**
 * How long each OAuth artefact lives, in seconds (decided in docs/decisions.md).
 * A host may change them; the protocol's own numbers are the defaults.
 */
export const OAuthLifetimes = Context.Reference<{
  /** An authorization code (60 s: docs/decisions.md, "Design: OAuth"). */
  readonly codeSeconds: number
  /** An access token (spec: 3600 s). */
  readonly accessTokenSeconds: number
  /** A refresh token unused for this long expires (sliding: each rotation starts it again). */
  readonly refreshIdleSeconds: number
  /** No refresh token outlives its grant's authorization by more than this (absolute). */
  readonly refreshAbsoluteSeconds: number
  /** An authorize request waiting for its browser to sign in and decide. */
  readonly pendingSeconds: number
  /** A signed-in browser session on the consent page. */
  readonly sessionSeconds: number
}>("@opsplatform/core/oauth/OAuthLifetimes", {
  defaultValue: () => ({
    codeSeconds: 60,
    accessTokenSeconds: 3600,
    refreshIdleSeconds: 30 * DAY,
    refreshAbsoluteSeconds: 90 * DAY,
    pendingSeconds: 10 * 60,
    sessionSeconds: 12 * 60 * 60
  })
})

/**
 * Failed sign-in attempts per account on the consent page. The attempt is
 * counted before the password is checked (so parallel guesses cannot pass the
 * limit together) and given back when it succeeds. Ten per quarter hour leaves
 * a member who mistypes room.
 */
export const signInPolicy: RatePolicy = { name: "oauth-sign-in", limit: 10, windowSeconds: 15 * 60 }

/**
 * Sign-in attempts per client network (an IPv4 address, an IPv6 /64), counted
 * before any hashing, successes included: 30 a minute is more than an office
 * behind one address signs in, and caps what one network asks of the hashing
 * pool at a derivation every two seconds (docs/decisions.md, "Limits and ranges").
 */
export const signInNetworkPolicy: RatePolicy = { name: "oauth-sign-in-network", limit: 30, windowSeconds: 60 }

/** Sign-in attempts per browser session (the consent page's cookie): a member who mistypes has room, a script does not. */
export const signInSessionPolicy: RatePolicy = { name: "oauth-sign-in-session", limit: 10, windowSeconds: 15 * 60 }

/**
 * Authorization requests that store something (a browser session, a pending
 * request) per client network: 30 a minute. With a browser session that has
 * not signed in living only as long as its request (10 minutes), one network
 * keeps at most 300 such rows.
 */
export const authorizeNetworkPolicy: RatePolicy = { name: "oauth-authorize-network", limit: 30, windowSeconds: 60 }

/** Token prefixes beyond the credential kinds (docs/decisions.md, "Design: credentials"). */
export const oauthPrefixes = {
  refreshToken: "svc_rt_",
  clientSecret: "svc_cs_"
} as const
