import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Pagination, Webhooks } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { currentTenant, ok, okPage } from "../api/envelope.ts"
import { domain } from "../api/errors.ts"

export const WebhooksHandlers = HttpApiBuilder.group(
  Api,
  "webhooks",
  Effect.fn(function*(handlers) {
    const webhooks = yield* Webhooks.Webhooks
    return handlers
      .handle("events", () => Effect.map(webhooks.eventTypes, ok))
      .handle("list", ({ query }) =>
        domain(Effect.gen(function*() {
          const tenant = yield* currentTenant
          return okPage(yield* webhooks.list(tenant, yield* Pagination.pageRequest(query)))
        })))
      .handle("create", ({ payload }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => webhooks.create(tenant, payload)).pipe(Effect.map(ok))))
      .handle("get", ({ params }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => webhooks.get(tenant, params.id)).pipe(Effect.map(ok))))
      .handle("update", ({ params, payload }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => webhooks.update(tenant, params.id, payload)).pipe(Effect.map(ok))))
      .handle("remove", ({ params }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => webhooks.remove(tenant, params.id))).pipe(
          Effect.as(ok({ id: params.id, deleted: true as const }))
        ))
      .handle("rotateSecret", ({ params, payload }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => webhooks.rotateSecret(tenant, params.id, payload ?? {})).pipe(Effect.map(ok))))
      .handle("test", ({ params }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => webhooks.sendTest(tenant, params.id)).pipe(Effect.map(ok))))
      .handle("deliveries", ({ params, query }) =>
        domain(Effect.gen(function*() {
          const tenant = yield* currentTenant
          const page = yield* Pagination.pageRequest(query)
          return okPage(yield* webhooks.listDeliveries(tenant, params.id, { status: query.status }, page))
        })))
      .handle("delivery", ({ params }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => webhooks.getDelivery(tenant, params.id, params.deliveryId)).pipe(
          Effect.map(ok)
        )))
      .handle("attempts", ({ params, query }) =>
        domain(Effect.gen(function*() {
          const tenant = yield* currentTenant
          const page = yield* Pagination.pageRequest(query)
          return okPage(yield* webhooks.listAttempts(tenant, params.id, params.deliveryId, page))
        })))
      .handle("redeliver", ({ params, payload }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => webhooks.redeliver(tenant, params.id, params.deliveryId, payload ?? {}))))
  })
)
