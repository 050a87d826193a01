import { type Effect, Schema } from "effect"
import type { Conflict } from "./errors.ts"

export const Environment = Schema.Literals(["live", "sandbox"])
export type Environment = typeof Environment.Type

/**
 * Every repository call is scoped by a tenant: one organization and one of its
 * two environments. A row is never visible through another tenant.
 */
export interface Tenant {
  readonly organizationId: string
  readonly environment: Environment
}

/**
 * The shape of a tenant-owned repository: every method takes the tenant
 * first. Methods that serve every tenant at once (a background job claiming
 * due work across organizations, authentication finding a credential by its
 * hash) are named in `CrossTenant`, so each exception is visible where the
 * port is declared. A method that forgets the tenant does not type-check:
 * its type becomes a message instead of a function.
 */
export type TenantScoped<Shape, CrossTenant extends keyof Shape = never> = {
  readonly [K in keyof Shape]: K extends CrossTenant ? Shape[K]
    : Shape[K] extends (tenant: Tenant, ...args: infer _Args) => infer _R ? Shape[K]
    : `${K & string} must take the Tenant as its first parameter, or be listed as cross-tenant`
}

/**
 * What a writer of many records at once (an import) asks of an area's
 * repository besides its own `insert` and `update`, in the caller's
 * transaction: a batch inserted in one statement, records locked by id, and
 * records removed — each with the area's own guarantees (a unique key, or a
 * reference that refuses a delete, is a Conflict).
 */
export interface BatchWrites<A> {
  /** Inserts every record in one statement; nothing for none. */
  readonly insertAll: (tenant: Tenant, records: ReadonlyArray<A>) => Effect.Effect<void, Conflict>
  /** The tenant's records with these ids, in id order, locked until the transaction ends. */
  readonly lockAll: (tenant: Tenant, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<A>>
  /** Removes the tenant's records with these ids, all or none. */
  readonly removeAll: (tenant: Tenant, ids: ReadonlyArray<string>) => Effect.Effect<void, Conflict>
}
