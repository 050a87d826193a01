import type { CursorKey } from "@opsplatform/core/shared/pagination"
import type { Tenant } from "@opsplatform/core/shared/tenant"

/** A row of a memory table, stamped with its tenant like the SQL tables' columns. */
export type Scoped<A> = A & { readonly organization_id: string; readonly environment: Tenant["environment"] }

export const inTenant = (tenant: Tenant) => (row: { organization_id: string; environment: string }) =>
  row.organization_id === tenant.organizationId && row.environment === tenant.environment

/** The keyset of the one list order: created_at, then id. */
export const keyOf = (row: { created_at: string; id: string }): CursorKey => ({ createdAt: row.created_at, id: row.id })
