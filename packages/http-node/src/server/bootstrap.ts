import { Effect } from "effect"
import { Credentials, Scopes, Tenancy, TenancyRepo } from "@opsplatform/core"

export interface DemoCredentials {
  readonly organization_id: string
  readonly organization_name: string
  readonly environment: "live"
  readonly api_key: string
  readonly sandbox_api_key: string
}

/**
 * On an empty database, creates a demo organization with an API key holding
 * every scope in each environment, so a newcomer can call the API at once.
 * Returns nothing when organizations already exist.
 */
export const bootstrapDemo = Effect.gen(function*() {
  const repo = yield* TenancyRepo.TenancyRepo
  if ((yield* repo.countOrganizations) > 0) return undefined
  const tenancy = yield* Tenancy.Tenancy
  const credentials = yield* Credentials.Credentials
  const org = yield* tenancy.createOrganization({ name: "Demo Organization" })
  const live = yield* credentials.issue({ organizationId: org.id, environment: "live" }, {
    kind: "api_key",
    scopes: Scopes.allScopes,
    name: "Demo key (every scope)"
  })
  const sandbox = yield* credentials.issue({ organizationId: org.id, environment: "sandbox" }, {
    kind: "api_key",
    scopes: Scopes.allScopes,
    name: "Demo sandbox key (every scope)"
  })
  return {
    organization_id: org.id,
    organization_name: org.name,
    environment: "live",
    api_key: live.token,
    sandbox_api_key: sandbox.token
  } satisfies DemoCredentials
}).pipe(Effect.orDie)
