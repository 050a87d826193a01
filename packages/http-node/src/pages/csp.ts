import { randomBytes } from "node:crypto"

/**
 * The pages' Content-Security-Policy: nothing loads unless named. Scripts and
 * styles run only with the response's nonce (no `unsafe-inline`, no
 * `unsafe-eval`), forms post to this origin (and the origins a page names),
 * and framing is refused unless the page names who may frame it.
 */

/** A fresh nonce per response: 128 random bits, base64. */
export const newNonce = (): string => randomBytes(16).toString("base64")

export interface PolicyOptions {
  readonly nonce: string
  /** Origins allowed to frame the page; none refuses framing. */
  readonly frameAncestors?: ReadonlyArray<string> | undefined
  /** Origins a form on the page may post to, besides this one. */
  readonly formTargets?: ReadonlyArray<string> | undefined
  /** Whether the page may fetch from its own origin (a script that refreshes part of the page). */
  readonly connectSelf?: boolean | undefined
}

export const contentSecurityPolicy = (options: PolicyOptions): string => {
  const ancestors = options.frameAncestors ?? []
  return [
    "default-src 'none'",
    `script-src 'nonce-${options.nonce}'`,
    `style-src 'nonce-${options.nonce}'`,
    "img-src 'self' data:",
    ...(options.connectSelf ? ["connect-src 'self'"] : []),
    `form-action 'self'${(options.formTargets ?? []).map((o) => ` ${o}`).join("")}`,
    `frame-ancestors ${ancestors.length === 0 ? "'none'" : ancestors.join(" ")}`,
    "base-uri 'none'"
  ].join("; ")
}

/**
 * Headers of every page: its policy, no sniffing, no Referer (a page's
 * address may hold a handle or a token), never cached. `X-Frame-Options`
 * only where nobody may frame the page: it cannot name origins.
 */
export const pageHeaders = (options: PolicyOptions): Record<string, string> => ({
  "content-security-policy": contentSecurityPolicy(options),
  ...((options.frameAncestors ?? []).length === 0 ? { "x-frame-options": "DENY" } : {}),
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  pragma: "no-cache"
})
