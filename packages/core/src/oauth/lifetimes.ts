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
 * Per client network (an IPv4 address, an IPv6 /64), a minute: sign-in
 * attempts, counted before any hashing, successes included; and authorization
 * requests that store something (a browser session, a pending request). 30
 * is more than an office behind one address signs in, caps what one network
 * asks of the hashing pool at a derivation every two seconds, and, with a
 * session that has not signed in living only as long as its request (10
 * minutes), keeps at most 300 such rows per network (docs/decisions.md,
 * "Limits and ranges"). A host sets it (`OPSPLATFORM_OAUTH_PER_NETWORK_PER_MIN`).
 */
export const OAuthNetworkLimit = Context.Reference<{ readonly perMinute: number }>(
  "@opsplatform/core/oauth/OAuthNetworkLimit",
  { defaultValue: () => ({ perMinute: 30 }) }
)

export const signInNetworkPolicy = (perMinute: number): RatePolicy => ({
  name: "oauth-sign-in-network",
  limit: perMinute,
  windowSeconds: 60
})

export const authorizeNetworkPolicy = (perMinute: number): RatePolicy => ({
  name: "oauth-authorize-network",
  limit: perMinute,
  windowSeconds: 60
})

/**
 * Sign-in attempts per browser session (the consent page's cookie), whatever
 * the email: twice an account's allowance, so a member who mistypes meets the
 * account's limit first, while a script trying emails in one session stops at 20.
 */
export const signInSessionPolicy: RatePolicy = { name: "oauth-sign-in-session", limit: 20, windowSeconds: 15 * 60 }

/** Token prefixes beyond the credential kinds (docs/decisions.md, "Design: credentials"). */
export const oauthPrefixes = {
  refreshToken: "svc_rt_",
  clientSecret: "svc_cs_"
} as const
