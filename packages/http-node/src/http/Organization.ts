import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { OrganizationSettings, Tenancy } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { currentTenant, ok } from "../api/envelope.ts"
import { domain } from "../api/errors.ts"

export const OrganizationHandlers = HttpApiBuilder.group(
  Api,
  "organization",
  Effect.fn(function*(handlers) {
    const tenancy = yield* Tenancy.Tenancy
    return handlers
      .handle("get", () =>
        domain(Effect.flatMap(currentTenant, (t) => tenancy.getOrganization(t.organizationId)).pipe(Effect.map(ok))))
      .handle("update", ({ payload }) =>
        domain(Effect.flatMap(currentTenant, (t) => OrganizationSettings.changeSettings(t, payload)).pipe(
          Effect.map(ok),
          Effect.provideService(Tenancy.Tenancy, tenancy)
        )))
  })
)
