import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { OAuthApps, Pagination } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { currentTenant, ok, okPage } from "../api/envelope.ts"
import { domain } from "../api/errors.ts"

export const AppsHandlers = HttpApiBuilder.group(
  Api,
  "apps",
  Effect.fn(function*(handlers) {
    const apps = yield* OAuthApps.OAuthApps
    return handlers
      .handle("list", ({ query }) =>
        domain(Effect.gen(function*() {
          const tenant = yield* currentTenant
          return okPage(yield* apps.list(tenant, yield* Pagination.pageRequest(query)))
        })))
      .handle("create", ({ payload }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => apps.register(tenant, payload)).pipe(Effect.map(ok))))
      .handle("get", ({ params }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => apps.get(tenant, params.id)).pipe(Effect.map(ok))))
      .handle("update", ({ params, payload }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => apps.update(tenant, params.id, payload)).pipe(Effect.map(ok))))
      .handle("remove", ({ params }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => apps.remove(tenant, params.id))).pipe(
          Effect.as(ok({ id: params.id, deleted: true as const }))
        ))
      .handle("rotateSecret", ({ params }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => apps.rotateSecret(tenant, params.id)).pipe(Effect.map(ok))))
      .handle("listInstallations", ({ query }) =>
        domain(Effect.gen(function*() {
          const tenant = yield* currentTenant
          return okPage(yield* apps.listInstallations(tenant, yield* Pagination.pageRequest(query)))
        })))
      .handle("install", ({ payload }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => apps.install(tenant, payload)).pipe(Effect.map(ok))))
      .handle("getInstallation", ({ params }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => apps.getInstallation(tenant, params.installationId)).pipe(
          Effect.map(ok)
        )))
      .handle("uninstall", ({ params }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => apps.uninstall(tenant, params.installationId))).pipe(
          Effect.as(ok({ id: params.installationId, deleted: true as const }))
        ))
  })
)
