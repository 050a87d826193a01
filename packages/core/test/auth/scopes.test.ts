import { describe, expect, it } from "vitest"
import { allScopes, displayScopes, hasScope, isScope, parseScopes } from "../../src/auth/scopes.ts"

const specScopes = [
  "contracts:read", "contracts:write", "delivery:read", "grants:read", "imports:read", "display:assistant",
  "display:read", "payments:charge", "webhooks:write", "invoices:read", "invoices:write", "contacts:read"
]

describe("scope catalog", () => {
  it("holds every scope the spec names and the ones decided for its open areas", () => {
    for (const s of [...specScopes, "locations:read", "expenses:read", "expenses:write", "delivery:write", "webhooks:read"]) {
      expect(isScope(s), s).toBe(true)
    }
    expect(new Set(allScopes).size).toBe(allScopes.length)
    for (const s of displayScopes) expect(isScope(s)).toBe(true)
  })

  it("checks exactly: no scope implies another", () => {
    expect(hasScope(["locations:write"], "locations:read")).toBe(false)
    expect(hasScope(["locations:read"], "locations:read")).toBe(true)
    expect(hasScope([], "locations:read")).toBe(false)
    expect(hasScope(["locations:read "], "locations:read")).toBe(false)
  })

  it("parses space-separated scopes, dropping duplicates and reporting unknown names", () => {
    expect(parseScopes("  locations:read\texpenses:read locations:read  nope:x ")).toEqual({
      scopes: ["locations:read", "expenses:read"],
      unknown: ["nope:x"]
    })
  })
})
