import { Schema } from "effect"
import { Filters } from "../shared/filters.ts"
import { isMaxChars, IsoDateTime, Uuid } from "../shared/schemas.ts"
import { Environment } from "../shared/tenant.ts"

export const AccessGrantId = Uuid.pipe(Schema.brand("AccessGrantId"))
export type AccessGrantId = typeof AccessGrantId.Type

/** A side of a grant: the accountant's cabinet, or the client whose books it keeps. */
export const GrantRole = Schema.Literals(["cabinet", "client"])
export type GrantRole = typeof GrantRole.Type

export const GrantStatus = Schema.Literals(["pending", "active", "revoked"])
export type GrantStatus = typeof GrantStatus.Type

/**
 * What a grant lets the cabinet do in the client's books (the API scopes of
 * each are in rules.ts `grantScopeSets`; decided: docs/decisions.md).
 */
export const GrantScope = Schema.Literals(["read", "bookkeeping"]).annotate({
  description: "read: the client's invoices, expenses, contacts, imports and contract obligations, read-only; " +
    "bookkeeping: read, and create and change invoices, expenses, contacts and imports"
})
export type GrantScope = typeof GrantScope.Type

/**
 * An accountant access grant as one organization sees it: `role` is the
 * caller's side, the counterparty is the other. The organization that asked
 * sees only the VAT number it asked for until the other side approves, so a
 * request never tells whether the number belongs to anyone here.
 */
export const AccessGrant = Schema.Struct({
  id: AccessGrantId,
  role: GrantRole.annotate({ description: "The calling organization's side" }),
  status: GrantStatus,
  scope: GrantScope,
  counterparty_org_id: Schema.NullOr(Schema.String).annotate({
    description: "The other organization; null for the side that asked, until the grant is approved"
  }),
  counterparty_name: Schema.NullOr(Schema.String).annotate({
    description: "The other organization's name; null for the side that asked, until the grant is approved"
  }),
  counterparty_vat_number: Schema.NullOr(Schema.String).annotate({
    description: "The other organization's CUI (for the side that asked, the number it asked for)"
  }),
  requested_at: IsoDateTime,
  approved_at: Schema.NullOr(IsoDateTime),
  revoked_at: Schema.NullOr(IsoDateTime)
}).annotate({ identifier: "AccessGrant" })
export type AccessGrant = typeof AccessGrant.Type

/**
 * A grant as stored: one row for both sides. The side that asked is always
 * known; the other is null when the VAT number asked for belongs to no
 * organization (such a request stays pending until it is withdrawn). Names
 * and VAT numbers of the sides are read from their organizations.
 */
export const AccessGrantRecord = Schema.Struct({
  id: AccessGrantId,
  environment: Environment,
  cabinet_organization_id: Schema.NullOr(Schema.String),
  client_organization_id: Schema.NullOr(Schema.String),
  requested_by: GrantRole,
  requested_vat_number: Schema.String,
  status: GrantStatus,
  scope: GrantScope,
  created_at: IsoDateTime,
  approved_at: Schema.NullOr(IsoDateTime),
  revoked_at: Schema.NullOr(IsoDateTime),
  cabinet_name: Schema.NullOr(Schema.String),
  cabinet_vat_number: Schema.NullOr(Schema.String),
  client_name: Schema.NullOr(Schema.String),
  client_vat_number: Schema.NullOr(Schema.String)
})
export type AccessGrantRecord = typeof AccessGrantRecord.Type

/** The fields of a record read from the organizations, never written with the grant. */
export const derivedFields = ["cabinet_name", "cabinet_vat_number", "client_name", "client_vat_number"] as const

/**
 * A request for a grant, from the caller's side: the cabinet asks its client,
 * or the client invites its accountant. The scope defaults to `read`.
 */
export const AccessGrantCreate = Schema.Struct({
  counterparty_vat_number: Schema.String.check(isMaxChars(40)).annotate({
    description: "The other organization's Romanian CUI/CIF, with or without RO"
  }),
  role: GrantRole.annotate({ description: "The calling organization's side: cabinet (asking a client) or client (inviting its accountant)" }),
  scope: Schema.optionalKey(GrantScope)
}).annotate({ identifier: "AccessGrantCreate" })
export type AccessGrantCreate = typeof AccessGrantCreate.Type

export const AccessGrantFilter = Schema.Struct({
  role: Schema.optionalKey(GrantRole.annotate({ description: "Only grants where the caller is on this side" }).pipe(Filters.own)),
  status: Schema.optionalKey(GrantStatus)
})
export type AccessGrantFilter = typeof AccessGrantFilter.Type

/** Who acts on a grant, for its audit entries: the credential, its own organization, the request. */
export interface GrantActor {
  readonly credentialId: string | null
  readonly organizationId: string
  readonly requestId: string | null
}
