import { Effect } from "effect"
import { BadRequest, type Conflict, type NotFound, type ValidationFailed } from "../shared/errors.ts"
import type { Tenant } from "../shared/tenant.ts"
import type { Organization, OrganizationUpdate } from "./model.ts"
import { Tenancy } from "./Tenancy.ts"

/**
 * Changes an organization's settings on behalf of a caller in one of its
 * environments. The settings are shared by both environments (one time zone,
 * one escalation delay), so only a live caller may change them: a sandbox key
 * never changes how live obligations are read or escalated.
 */
export const changeSettings = (
  tenant: Tenant,
  patch: OrganizationUpdate
): Effect.Effect<Organization, BadRequest | NotFound | ValidationFailed | Conflict, Tenancy> =>
  tenant.environment === "live"
    ? Effect.flatMap(Tenancy, (tenancy) => tenancy.updateSettings(tenant.organizationId, patch))
    : Effect.fail(
      new BadRequest({
        errorCode: "live_credential_required",
        reason: "Organization settings apply to both environments; change them with a live credential"
      })
    )
