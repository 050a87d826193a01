import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { OAuthApps } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { listForTenant, withTenant } from "./respond.ts"

export const OAuthHandlers = HttpApiBuilder.group(
  Api,
  "oauth",
  Effect.fn(function*(handlers) {
    const apps = yield* OAuthApps.OAuthApps
    return handlers
      .handle("list", ({ query }) => listForTenant(query, (tenant, _filter, page) => apps.list(tenant, page)))
      .handle("create", ({ payload }) => withTenant((tenant) => apps.register(tenant, payload)))
      .handle("get", ({ params }) => withTenant((tenant) => apps.get(tenant, params.id)))
      .handle("update", ({ params, payload }) => withTenant((tenant) => apps.update(tenant, params.id, payload)))
      .handle("remove", ({ params }) =>
        withTenant((tenant) => Effect.as(apps.remove(tenant, params.id), { id: params.id, deleted: true as const })))
      .handle("rotateSecret", ({ params }) => withTenant((tenant) => apps.rotateSecret(tenant, params.id)))
      .handle("listInstallations", ({ query }) =>
        listForTenant(query, (tenant, _filter, page) => apps.listInstallations(tenant, page)))
      .handle("install", ({ payload }) => withTenant((tenant) => apps.install(tenant, payload)))
      .handle("getInstallation", ({ params }) => withTenant((tenant) => apps.getInstallation(tenant, params.installationId)))
      .handle("uninstall", ({ params }) =>
        withTenant((tenant) =>
          Effect.as(apps.uninstall(tenant, params.installationId), { id: params.installationId, deleted: true as const })
        ))
  })
)
