import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { OrganizationSettings, Tenancy } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { withTenant } from "./respond.ts"

export const TenancyHandlers = HttpApiBuilder.group(
  Api,
  "tenancy",
  Effect.fn(function*(handlers) {
    const tenancy = yield* Tenancy.Tenancy
    return handlers
      .handle("get", () =>
        withTenant((t) => tenancy.getOrganization(t.organizationId)))
      .handle("update", ({ payload }) =>
        withTenant((t) => OrganizationSettings.changeSettings(t, payload)).pipe(Effect.provideService(Tenancy.Tenancy, tenancy)))
  })
)
