import { createHash } from "node:crypto"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { AuthorizationCode, Grant, RefreshToken, StoredInstallation } from "../../src/oauth/model.ts"
import {
  chooseInstallation,
  codeState,
  intersectScopes,
  isCodeVerifier,
  isS256Challenge,
  matchRedirectUri,
  parseScopeParameter,
  pkceMatches,
  redirectUriIssue,
  refreshExpiry,
  refreshState,
  registrationIssues,
  scopesOutside
} from "../../src/oauth/rules.ts"

const sha256 = (text: string) => new Uint8Array(createHash("sha256").update(text).digest())

const segment = fc.stringMatching(/^[a-z0-9_-]{1,12}$/)
const path = fc.array(segment, { minLength: 1, maxLength: 3 }).map((parts) => `/${parts.join("/")}`)
const httpsUri = fc.tuple(segment, path).map(([host, p]) => `https://${host}.example${p}`)
const port = fc.integer({ min: 1, max: 65535 })

describe("redirect URI matching", () => {
  it("matches a registered URI exactly, and nothing that differs by a character", () => {
    fc.assert(fc.property(httpsUri, fc.constantFrom("/", "?x=1", "#f", "A", "%2F"), (uri, extra) => {
      expect(matchRedirectUri([uri], uri)).toBe(uri)
      expect(matchRedirectUri([uri], uri + extra)).toBeUndefined()
      expect(matchRedirectUri([uri], uri.toUpperCase())).toBeUndefined()
      expect(matchRedirectUri([uri], uri.replace("https://", "http://"))).toBeUndefined()
    }))
  })

  it("accepts any port on a registered loopback IP literal, with the same path and query (RFC 8252 §7.3)", () => {
    fc.assert(fc.property(fc.constantFrom("127.0.0.1", "[::1]"), fc.option(port), port, path, (host, registeredPort, used, p) => {
      const registered = `http://${host}${registeredPort === null ? "" : `:${registeredPort}`}${p}`
      expect(matchRedirectUri([registered], `http://${host}:${used}${p}`)).toBe(registered)
      expect(matchRedirectUri([registered], `http://${host}:${used}${p}/`)).toBeUndefined()
      expect(matchRedirectUri([registered], `http://${host}:${used}${p}?a=b`)).toBeUndefined()
      expect(matchRedirectUri([registered], `https://${host}:${used}${p}`)).toBeUndefined()
    }))
  })

  it("never lets the loopback exception cross hosts, reach localhost, or relax a non-loopback port", () => {
    expect(matchRedirectUri(["http://127.0.0.1/cb"], "http://[::1]:8000/cb")).toBeUndefined()
    expect(matchRedirectUri(["http://127.0.0.1/cb"], "http://localhost:8000/cb")).toBeUndefined()
    expect(matchRedirectUri(["http://127.0.0.1/cb"], "http://127.0.0.1:0/cb")).toBeUndefined()
    expect(matchRedirectUri(["http://127.0.0.1/cb"], "http://127.0.0.1:70000/cb")).toBeUndefined()
    expect(matchRedirectUri(["https://app.example/cb"], "https://app.example:443/cb")).toBeUndefined()
    expect(matchRedirectUri(["http://127.0.0.1/cb"], "http://127.0.0.1.evil.example/cb")).toBeUndefined()
  })

  it("registers https URIs and http only on loopback IP literals", () => {
    expect(redirectUriIssue("https://app.example/callback")).toBeUndefined()
    expect(redirectUriIssue("https://app.example/cb?tenant=1")).toBeUndefined()
    expect(redirectUriIssue("http://127.0.0.1:3000/cb")).toBeUndefined()
    expect(redirectUriIssue("http://[::1]/cb")).toBeUndefined()
    expect(redirectUriIssue("http://app.example/cb")).toMatch(/https/)
    expect(redirectUriIssue("http://localhost:3000/cb")).toMatch(/127\.0\.0\.1/)
    expect(redirectUriIssue("https://app.example/cb#x")).toMatch(/fragment/)
    expect(redirectUriIssue("https://u:p@app.example/cb")).toMatch(/user information/)
    expect(redirectUriIssue("com.example.app:/cb")).toMatch(/https/)
    expect(redirectUriIssue("/relative")).toMatch(/absolute/)
  })
})

describe("PKCE S256", () => {
  it("verifies the RFC 7636 Appendix B example and rejects any other verifier", () => {
    const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    const challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    expect(isCodeVerifier(verifier)).toBe(true)
    expect(isS256Challenge(challenge)).toBe(true)
    expect(pkceMatches(challenge, sha256(verifier))).toBe(true)
    fc.assert(fc.property(fc.stringMatching(/^[A-Za-z0-9._~-]{43,128}$/), (other) => {
      fc.pre(other !== verifier)
      expect(pkceMatches(challenge, sha256(other))).toBe(false)
    }))
  })

  it("takes verifiers of 43 to 128 unreserved characters only", () => {
    expect(isCodeVerifier("a".repeat(42))).toBe(false)
    expect(isCodeVerifier("a".repeat(43))).toBe(true)
    expect(isCodeVerifier("a".repeat(128))).toBe(true)
    expect(isCodeVerifier("a".repeat(129))).toBe(false)
    expect(isCodeVerifier(`${"a".repeat(42)}+`)).toBe(false)
    expect(isS256Challenge("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM=")).toBe(false)
  })
})

describe("scopes", () => {
  it("a subset has nothing outside; the intersection stays within both", () => {
    const scope = fc.constantFrom("locations:read", "locations:write", "expenses:read", "apps:write")
    fc.assert(fc.property(fc.array(scope), fc.array(scope), (a, b) => {
      const both = intersectScopes(a, b)
      expect(scopesOutside(both, a)).toEqual([])
      expect(scopesOutside(both, b)).toEqual([])
      expect(scopesOutside(a, a)).toEqual([])
    }))
  })

  it("parses space-separated tokens; other separators or characters make the value unknown", () => {
    expect(parseScopeParameter("locations:read expenses:read locations:read")).toEqual({
      scopes: ["locations:read", "expenses:read"],
      unknown: []
    })
    expect(parseScopeParameter("locations:read root:all").unknown).toEqual(["root:all"])
    expect(parseScopeParameter("locations:read\texpenses:read")).toEqual({ scopes: [], unknown: ["locations:read\texpenses:read"] })
    expect(parseScopeParameter("locations:read \"x\"").scopes).toEqual([])
  })
})

describe("registration", () => {
  it("ties grant types to the app type and redirect URIs", () => {
    const base = { type: "confidential" as const, redirect_uris: ["https://a.example/cb"], scopes: ["locations:read"] }
    expect(registrationIssues({ ...base, grant_types: ["authorization_code", "refresh_token", "client_credentials"] })).toEqual([])
    expect(registrationIssues({ ...base, type: "public", grant_types: ["client_credentials"] }).map((d) => d.field)).toEqual(["grant_types"])
    expect(registrationIssues({ ...base, grant_types: ["refresh_token"] }).map((d) => d.field)).toEqual(["grant_types"])
    expect(registrationIssues({ ...base, redirect_uris: [], grant_types: ["authorization_code"] }).map((d) => d.field)).toEqual(["redirect_uris"])
    expect(registrationIssues({ ...base, redirect_uris: [], grant_types: ["client_credentials"] })).toEqual([])
    expect(registrationIssues({ ...base, scopes: [], grant_types: ["client_credentials"] }).map((d) => d.field)).toEqual(["scopes"])
  })
})

const grant = (overrides: Partial<Grant> = {}): Grant => ({
  id: "g",
  app_id: "a",
  kind: "authorization_code",
  organization_id: "o",
  environment: "live",
  user_id: "u",
  installation_id: null,
  scopes: ["locations:read"],
  created_at: "2026-01-01T00:00:00.000Z",
  refresh_until: "2026-04-01T00:00:00.000Z",
  revoked_at: null,
  ...overrides
})

const token = (overrides: Partial<RefreshToken> = {}): RefreshToken => ({
  id: "t",
  token_hash: "h",
  grant_id: "g",
  app_id: "a",
  parent_id: null,
  created_at: "2026-01-01T00:00:00.000Z",
  expires_at: "2026-01-31T00:00:00.000Z",
  used_at: null,
  revoked_at: null,
  ...overrides
})

describe("refresh chains and codes", () => {
  const now = Date.parse("2026-01-10T00:00:00.000Z")

  it("a used token is a reuse before anything else; then revoked; then expired", () => {
    expect(refreshState(token(), grant(), now)).toBe("active")
    expect(refreshState(token({ used_at: "x", revoked_at: "y", expires_at: "2000-01-01T00:00:00.000Z" }), grant({ revoked_at: "y" }), now)).toBe("reused")
    expect(refreshState(token({ revoked_at: "y", expires_at: "2000-01-01T00:00:00.000Z" }), grant(), now)).toBe("revoked")
    expect(refreshState(token(), grant({ revoked_at: "y" }), now)).toBe("revoked")
    expect(refreshState(token(), undefined, now)).toBe("revoked")
    expect(refreshState(token({ expires_at: "2026-01-10T00:00:00.000Z" }), grant(), now)).toBe("expired")
  })

  it("a new refresh token lives the idle period but never past the grant's absolute end", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 10 ** 12 }), fc.integer({ min: 1, max: 10 ** 10 }), fc.integer({ min: 0, max: 10 ** 12 }), (at, idle, until) => {
      const expiry = Date.parse(refreshExpiry(at, idle, new Date(until).toISOString()))
      expect(expiry).toBe(Math.min(at + idle, until))
    }))
    expect(refreshExpiry(0, 1000, null)).toBe(new Date(1000).toISOString())
  })

  it("a used code is a replay whatever its age", () => {
    const code = { used_at: null, expires_at: "2026-01-10T00:01:00.000Z" } as AuthorizationCode
    expect(codeState(code, now)).toBe("active")
    expect(codeState({ ...code, expires_at: "2026-01-10T00:00:00.000Z" }, now)).toBe("expired")
    expect(codeState({ ...code, used_at: "x", expires_at: "2000-01-01T00:00:00.000Z" }, now)).toBe("used")
  })
})

describe("client_credentials installation choice", () => {
  const at = (organization_id: string, environment: "live" | "sandbox"): StoredInstallation => ({
    id: `${organization_id}-${environment}`,
    app_id: "a",
    organization_id,
    environment,
    scopes: [],
    created_at: "2026-01-01T00:00:00.000Z"
  })

  it("needs exactly one installation matching the fields that were sent", () => {
    const all = [at("o1", "live"), at("o1", "sandbox"), at("o2", "live")]
    expect(chooseInstallation([at("o1", "live")], {})).toMatchObject({ _tag: "Chosen" })
    expect(chooseInstallation([], {})).toEqual({ _tag: "NotInstalled" })
    expect(chooseInstallation(all, {})).toEqual({ _tag: "Ambiguous", count: 3 })
    expect(chooseInstallation(all, { organizationId: "o1" })).toEqual({ _tag: "Ambiguous", count: 2 })
    expect(chooseInstallation(all, { organizationId: "o1", environment: "sandbox" })).toMatchObject({ installation: { id: "o1-sandbox" } })
    expect(chooseInstallation(all, { organizationId: "o2" })).toMatchObject({ installation: { id: "o2-live" } })
    expect(chooseInstallation(all, { organizationId: "o2", environment: "sandbox" })).toEqual({ _tag: "NotInstalled" })
  })
})
