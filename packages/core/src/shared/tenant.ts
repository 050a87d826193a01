import { Schema } from "effect"

export const Environment = Schema.Literals(["live", "sandbox"])
export type Environment = typeof Environment.Type
export const environments: ReadonlyArray<Environment> = ["live", "sandbox"]

/**
 * Every repository call is scoped by a tenant: one organization and one of its
 * two environments. A row is never visible through another tenant.
 */
export interface Tenant {
  readonly organizationId: string
  readonly environment: Environment
}
