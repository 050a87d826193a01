import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { allScopes } from "../../src/auth/scopes.ts"
import { type AccessGrantRecord, AccessGrantId, type GrantRole, type GrantScope } from "../../src/grants/model.ts"
import { effectiveScopes, grantLifecycle, grantScopeSets, revocationAction, viewOf } from "../../src/grants/rules.ts"

const grant = (over: Partial<AccessGrantRecord> = {}): AccessGrantRecord => ({
  id: AccessGrantId.make("00000000-0000-4000-8000-000000000001"),
  environment: "live",
  cabinet_organization_id: "00000000-0000-4000-8000-00000000000c",
  client_organization_id: "00000000-0000-4000-8000-00000000000a",
  requested_by: "cabinet",
  requested_vat_number: "14399840",
  status: "pending",
  scope: "read",
  created_at: "2026-03-02T08:00:00.000Z",
  approved_at: null,
  revoked_at: null,
  cabinet_name: "Cabinet SRL",
  cabinet_vat_number: "1859",
  client_name: "Client SRL",
  client_vat_number: "14399840",
  ...over
})

describe("grant lifecycle", () => {
  it("moves pending → active on approval, and pending or active → revoked; nothing leaves revoked", () => {
    expect(grantLifecycle.moves).toEqual({ pending: ["active", "revoked"], active: ["revoked"], revoked: [] })
    expect(grantLifecycle.target("active", "approve")).toBeUndefined()
    expect(grantLifecycle.target("revoked", "revoke")).toBeUndefined()
  })

  it("names an ending after who ends what", () => {
    expect(revocationAction(grant(), "cabinet")).toBe("grant.withdraw")
    expect(revocationAction(grant(), "client")).toBe("grant.decline")
    for (const by of ["cabinet", "client"] as const) {
      expect(revocationAction(grant({ status: "active", approved_at: "2026-03-02T09:00:00.000Z" }), by)).toBe("grant.revoke")
    }
  })
})

describe("grant scopes", () => {
  it("read allows only reading the books; bookkeeping adds writing them", () => {
    expect([...grantScopeSets.read].sort()).toEqual(["contacts:read", "contracts:read", "expenses:read", "imports:read", "invoices:read"])
    expect(grantScopeSets.bookkeeping.filter((s) => !grantScopeSets.read.includes(s)).sort())
      .toEqual(["contacts:write", "expenses:write", "imports:write", "invoices:write"])
  })

  it("a delegated credential holds exactly the scopes it had that the grant allows", () => {
    fc.assert(fc.property(
      fc.subarray([...allScopes]),
      fc.constantFrom<GrantScope>("read", "bookkeeping"),
      (held, scope) => {
        const effective = effectiveScopes(held, scope)
        expect([...effective].sort()).toEqual(held.filter((s) => grantScopeSets[scope].includes(s)).sort())
      }
    ))
  })
})

describe("a grant seen from each side", () => {
  it("the side asked sees who asked; the side that asked sees only its number until approval", () => {
    const pending = grant({ requested_by: "client" })
    expect(viewOf(pending, "cabinet")).toMatchObject({
      role: "cabinet",
      counterparty_org_id: pending.client_organization_id,
      counterparty_name: "Client SRL",
      counterparty_vat_number: "14399840"
    })
    expect(viewOf(pending, "client")).toMatchObject({
      role: "client",
      counterparty_org_id: null,
      counterparty_name: null,
      counterparty_vat_number: "14399840",
      requested_at: pending.created_at
    })
    const approved = grant({ requested_by: "client", status: "active", approved_at: "2026-03-02T09:00:00.000Z" })
    expect(viewOf(approved, "client")).toMatchObject({
      counterparty_org_id: approved.cabinet_organization_id,
      counterparty_name: "Cabinet SRL",
      counterparty_vat_number: "1859"
    })
  })

  it("a request for a number nobody holds looks like any other request to the side that asked", () => {
    fc.assert(fc.property(fc.constantFrom<GrantRole>("cabinet", "client"), (role) => {
      const known = grant({ requested_by: role })
      const unknown = grant({
        requested_by: role,
        ...(role === "cabinet"
          ? { client_organization_id: null, client_name: null, client_vat_number: null }
          : { cabinet_organization_id: null, cabinet_name: null, cabinet_vat_number: null })
      })
      expect(viewOf(unknown, role)).toEqual(viewOf(known, role))
    }))
  })
})
