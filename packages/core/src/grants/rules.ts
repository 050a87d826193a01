import type { Scope } from "../auth/scopes.ts"
import { transitionTable } from "../shared/transitions.ts"
import { type AccessGrant, type AccessGrantRecord, type GrantRole, type GrantScope, GrantStatus } from "./model.ts"

/**
 * The lifecycle of a grant: the side that was asked approves a pending one;
 * either side ends a pending (withdrawn by the side that asked, declined by
 * the other) or an active one. A revoked grant stays revoked; access again is
 * a new request.
 */
export const grantLifecycle = transitionTable(GrantStatus.literals, {
  approve: { from: ["pending"], to: "active" },
  revoke: { from: ["pending", "active"], to: "revoked" }
})

const readScopes = [
  "invoices:read",
  "expenses:read",
  "contacts:read",
  "imports:read",
  "contracts:read"
] as const satisfies ReadonlyArray<Scope>

/**
 * The API scopes each grant scope allows a cabinet in its client's books
 * (decided: docs/decisions.md, "Accountant access grants"). Nothing else of the
 * client's is reachable through a grant: its settings, members, credentials,
 * webhooks, apps, audit log and grants stay its own.
 */
export const grantScopeSets: Readonly<Record<GrantScope, ReadonlyArray<Scope>>> = {
  read: readScopes,
  bookkeeping: [...readScopes, "invoices:write", "expenses:write", "contacts:write", "imports:write"]
}

/** What a cabinet's credential may do for a client: the scopes it holds that the grant also allows. */
export const effectiveScopes = (held: Iterable<string>, scope: GrantScope): ReadonlySet<Scope> => {
  const allowed: ReadonlyArray<string> = grantScopeSets[scope]
  return new Set([...held].filter((s): s is Scope => allowed.includes(s)))
}

export const otherSide = (role: GrantRole): GrantRole => role === "cabinet" ? "client" : "cabinet"

/** The organization on one side of a grant (null: a VAT number no organization holds). */
export const organizationOn = (grant: AccessGrantRecord, role: GrantRole): string | null =>
  role === "cabinet" ? grant.cabinet_organization_id : grant.client_organization_id

/** The side an organization is on, if it is on one. */
export const sideOf = (grant: AccessGrantRecord, organizationId: string): GrantRole | undefined =>
  grant.cabinet_organization_id === organizationId ? "cabinet"
  : grant.client_organization_id === organizationId ? "client"
  : undefined

/**
 * A grant as one side sees it. The side that asked learns who the other is
 * only once the other approves: until then it sees the VAT number it asked for
 * and nothing else, the same whether that number belongs to an organization or
 * not (decided: docs/decisions.md).
 */
export const viewOf = (grant: AccessGrantRecord, role: GrantRole): AccessGrant => {
  const other = otherSide(role)
  const revealed = grant.requested_by !== role || grant.approved_at !== null
  return {
    id: grant.id,
    role,
    status: grant.status,
    scope: grant.scope,
    counterparty_org_id: revealed ? organizationOn(grant, other) : null,
    counterparty_name: revealed ? (other === "cabinet" ? grant.cabinet_name : grant.client_name) : null,
    counterparty_vat_number: revealed
      ? (other === "cabinet" ? grant.cabinet_vat_number : grant.client_vat_number)
      : grant.requested_vat_number,
    requested_at: grant.created_at,
    approved_at: grant.approved_at,
    revoked_at: grant.revoked_at
  }
}

/** The audit action of ending a grant: withdrawing one's own request, declining another's, or revoking an active grant. */
export const revocationAction = (grant: AccessGrantRecord, by: GrantRole): "grant.withdraw" | "grant.decline" | "grant.revoke" =>
  grant.status === "active" ? "grant.revoke" : grant.requested_by === by ? "grant.withdraw" : "grant.decline"
