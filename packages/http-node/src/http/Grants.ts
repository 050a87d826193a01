import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { type GrantModel, Grants, type Tenant } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { CurrentRequestId } from "../api/requestContext.ts"
import { CurrentPrincipal } from "../api/security.ts"
import { listForTenant, withTenant } from "./respond.ts"

/** The credential acting on a grant, for the audit log of each side. */
const currentActor = Effect.gen(function*() {
  const principal = yield* CurrentPrincipal
  return {
    credentialId: principal.credentialId,
    organizationId: principal.onBehalf?.cabinetOrganizationId ?? principal.organizationId,
    requestId: yield* CurrentRequestId
  } satisfies GrantModel.GrantActor
})

export const GrantsHandlers = HttpApiBuilder.group(
  Api,
  "grants",
  Effect.fn(function*(handlers) {
    const grants = yield* Grants.Grants
    const asActor = <A, E, R>(f: (tenant: Tenant.Tenant, actor: GrantModel.GrantActor) => Effect.Effect<A, E, R>) =>
      withTenant((tenant) => Effect.flatMap(currentActor, (actor) => f(tenant, actor)))
    return handlers
      .handle("list", ({ query }) => listForTenant(query, (tenant, filter, page) => grants.list(tenant, filter, page)))
      .handle("get", ({ params }) => withTenant((tenant) => grants.get(tenant, params.id)))
      .handle("create", ({ payload }) => asActor((tenant, actor) => grants.request(tenant, actor, payload)))
      .handle("approve", ({ params }) => asActor((tenant, actor) => grants.approve(tenant, actor, params.id)))
      .handle("revoke", ({ params }) => asActor((tenant, actor) => grants.revoke(tenant, actor, params.id)))
  })
)
