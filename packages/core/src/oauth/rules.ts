import { constantTimeEqualStrings, encodeBase64Url } from "../shared/secrets.ts"
import { isScope, parseScopes } from "../auth/scopes.ts"
import type { Environment, Tenant } from "../shared/tenant.ts"
import type { AppType, AuthorizationCode, Grant, GrantType, RefreshToken, StoredInstallation } from "./model.ts"

/**
 * The OAuth rules as pure functions (RFC 6749, RFC 7636, RFC 8252, RFC 9700,
 * OAuth 2.1): redirect URI registration and matching, PKCE S256, scope subsets,
 * and the states of codes and refresh tokens.
 */

// ---------------------------------------------------------------- redirect URIs

/** `http://` + loopback IP literal, optional port, then the rest verbatim (RFC 8252 §7.3). */
const loopbackUri = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?([/?][^#]*)?$/

/** Why a redirect URI cannot be registered, or undefined when it can. */
export const redirectUriIssue = (uri: string): string | undefined => {
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return "must be an absolute URL"
  }
  if (uri.includes("#")) return "must not contain a fragment"
  if (url.username !== "" || url.password !== "") return "must not contain user information"
  if (/\s/.test(uri)) return "must not contain whitespace"
  if (url.protocol === "https:") {
    return /^https:\/\/[^/?#]/.test(uri) ? undefined : "must start with https:// followed by a host"
  }
  if (url.protocol === "http:") {
    if (url.hostname === "localhost") return "use the loopback IP literal http://127.0.0.1 or http://[::1] instead of localhost (RFC 8252 §8.3)"
    return loopbackUri.test(uri) ? undefined : "must use https; http is allowed only on the loopback IP literals 127.0.0.1 and [::1]"
  }
  return "must use https, or http on a loopback IP literal"
}

/**
 * The registered URI a presented redirect_uri matches, or undefined. Matching
 * is exact string comparison (no normalization: case, a trailing slash or an
 * extra query parameter all differ), except that on a registered loopback URI
 * any port is accepted, as native apps listen on an ephemeral one (RFC 8252 §7.3).
 */
export const matchRedirectUri = (registered: ReadonlyArray<string>, presented: string): string | undefined => {
  const exact = registered.find((r) => r === presented)
  if (exact !== undefined) return exact
  const p = loopbackUri.exec(presented)
  if (p === null) return undefined
  if (p[2] !== undefined && (Number(p[2]) < 1 || Number(p[2]) > 65535)) return undefined
  return registered.find((r) => {
    const m = loopbackUri.exec(r)
    return m !== null && m[1] === p[1] && (m[3] ?? "") === (p[3] ?? "")
  })
}

// ---------------------------------------------------------------- PKCE (RFC 7636)

/** A code verifier: 43 to 128 unreserved characters (RFC 7636 §4.1). */
export const isCodeVerifier = (v: string): boolean => /^[A-Za-z0-9\-._~]{43,128}$/.test(v)

/** An S256 challenge: base64url without padding of a SHA-256 digest, so exactly 43 characters. */
export const isS256Challenge = (c: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(c)

/**
 * Whether the verifier's S256 transform (the base64url of its SHA-256, passed
 * in as `verifierDigest`) equals the stored challenge, compared in constant time.
 */
export const pkceMatches = (challenge: string, verifierDigest: Uint8Array): boolean =>
  constantTimeEqualStrings(challenge, encodeBase64Url(verifierDigest))

// ---------------------------------------------------------------- scopes

/**
 * A scope parameter (RFC 6749 §3.3): scope tokens separated by spaces. Known
 * scopes come back in order without duplicates; a value with any character a
 * scope token or separator may not hold is unknown as a whole.
 */
export const parseScopeParameter = (
  value: string
): { readonly scopes: ReadonlyArray<string>; readonly unknown: ReadonlyArray<string> } =>
  /[^\x20\x21\x23-\x5b\x5d-\x7e]/.test(value) ? { scopes: [], unknown: [value] } : parseScopes(value)

/** The requested scopes that `allowed` does not contain (empty: the request is a subset). */
export const scopesOutside = (requested: ReadonlyArray<string>, allowed: ReadonlyArray<string>): ReadonlyArray<string> =>
  requested.filter((s) => !allowed.includes(s))

/** `granted` narrowed to what `limit` still allows, in the order of `granted`. */
export const intersectScopes = (granted: ReadonlyArray<string>, limit: ReadonlyArray<string>): ReadonlyArray<string> =>
  granted.filter((s) => limit.includes(s))

export const formatScopes = (scopes: ReadonlyArray<string>): string => scopes.join(" ")

// ---------------------------------------------------------------- registration

/** Everything wrong with an app's registration, one detail per problem. */
export const registrationIssues = (app: {
  readonly type: AppType
  readonly redirect_uris: ReadonlyArray<string>
  readonly scopes: ReadonlyArray<string>
  readonly grant_types: ReadonlyArray<GrantType>
}): ReadonlyArray<{ readonly field: string; readonly issue: string }> => {
  const details: Array<{ field: string; issue: string }> = []
  app.redirect_uris.forEach((uri, i) => {
    const issue = redirectUriIssue(uri)
    if (issue !== undefined) details.push({ field: `redirect_uris.${i}`, issue })
  })
  if (new Set(app.redirect_uris).size !== app.redirect_uris.length) {
    details.push({ field: "redirect_uris", issue: "must not repeat a URI" })
  }
  const unknown = app.scopes.filter((s) => !isScope(s))
  if (app.scopes.length === 0) details.push({ field: "scopes", issue: "must name at least one scope" })
  if (unknown.length > 0) details.push({ field: "scopes", issue: `unknown scopes: ${unknown.join(", ")}` })
  const grants = new Set(app.grant_types)
  if (grants.size === 0) details.push({ field: "grant_types", issue: "must name at least one grant type" })
  if (grants.has("authorization_code") && app.redirect_uris.length === 0) {
    details.push({ field: "redirect_uris", issue: "authorization_code needs at least one redirect URI" })
  }
  if (grants.has("refresh_token") && !grants.has("authorization_code")) {
    details.push({ field: "grant_types", issue: "refresh_token is only issued with authorization_code" })
  }
  if (grants.has("client_credentials") && app.type === "public") {
    details.push({ field: "grant_types", issue: "client_credentials needs a confidential app (a public app cannot keep a secret)" })
  }
  return details
}

// ---------------------------------------------------------------- codes and refresh chains

export type CodeState = "active" | "used" | "expired"

/** A used code is a replay whatever its age; only an unused one can merely have expired. */
export const codeState = (code: Pick<AuthorizationCode, "used_at" | "expires_at">, nowMs: number): CodeState =>
  code.used_at !== null ? "used" : Date.parse(code.expires_at) <= nowMs ? "expired" : "active"

export type RefreshState = "active" | "reused" | "revoked" | "expired"

/**
 * A refresh token presented again after it was rotated is `reused`, whatever
 * else holds: that is the signal of a stolen chain (RFC 9700 §4.14.2), so it
 * is checked before revocation and expiry.
 */
export const refreshState = (
  token: Pick<RefreshToken, "used_at" | "revoked_at" | "expires_at">,
  grant: Pick<Grant, "revoked_at"> | undefined,
  nowMs: number
): RefreshState =>
  token.used_at !== null
    ? "reused"
    : token.revoked_at !== null || grant === undefined || grant.revoked_at !== null
    ? "revoked"
    : Date.parse(token.expires_at) <= nowMs
    ? "expired"
    : "active"

/** A new refresh token lives `idleMs` (sliding) but never past the grant's absolute end. */
export const refreshExpiry = (nowMs: number, idleMs: number, refreshUntil: string | null): string => {
  const idle = nowMs + idleMs
  const until = refreshUntil === null ? idle : Math.min(idle, Date.parse(refreshUntil))
  return new Date(until).toISOString()
}

// ---------------------------------------------------------------- tenants

/** The organization environment a grant, code or installation belongs to. */
export const tenantOf = (row: { readonly organization_id: string; readonly environment: Environment }): Tenant => ({
  organizationId: row.organization_id,
  environment: row.environment
})

// ---------------------------------------------------------------- client_credentials

export type InstallationChoice<I = StoredInstallation> =
  | { readonly _tag: "Chosen"; readonly installation: I }
  | { readonly _tag: "NotInstalled" }
  | { readonly _tag: "Ambiguous"; readonly count: number }

/**
 * Which installation a client_credentials request reaches: the one the
 * optional organization_id / environment fields select, which must be exactly one.
 */
export const chooseInstallation = <I extends Pick<StoredInstallation, "organization_id" | "environment">>(
  installations: ReadonlyArray<I>,
  want: { readonly organizationId?: string | undefined; readonly environment?: Environment | undefined }
): InstallationChoice<I> => {
  const matching = installations.filter((i) =>
    (want.organizationId === undefined || i.organization_id === want.organizationId) &&
    (want.environment === undefined || i.environment === want.environment)
  )
  if (matching.length === 1) return { _tag: "Chosen", installation: matching[0]! }
  return matching.length === 0 ? { _tag: "NotInstalled" } : { _tag: "Ambiguous", count: matching.length }
}
