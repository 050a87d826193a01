import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { PortalSessions, Webhooks } from "@opsplatform/core"
import { issuerOf } from "../oauth/protocol.ts"
import { portalLinkUrl } from "../portal/paths.ts"
import { Api } from "../api/Api.ts"
import { currentTenant, ok } from "../api/envelope.ts"
import { domain } from "../api/errors.ts"
import { listForTenant, withTenant } from "./respond.ts"

export const WebhooksHandlers = HttpApiBuilder.group(
  Api,
  "webhooks",
  Effect.fn(function*(handlers) {
    const webhooks = yield* Webhooks.Webhooks
    const portal = yield* PortalSessions.PortalSessions
    return handlers
      .handle("createPortalSession", ({ payload }) =>
        withTenant((tenant) =>
          Effect.gen(function*() {
            const { linkToken, session } = yield* portal.create(tenant, payload ?? {})
            return { ...session, url: portalLinkUrl(yield* issuerOf, linkToken) }
          })
        ))
      .handle("revokePortalSession", ({ params }) =>
        withTenant((tenant) => Effect.as(portal.revoke(tenant, params.id), { id: params.id, revoked: true as const })))
      .handle("secret", ({ params }) => withTenant((tenant) => webhooks.revealSecret(tenant, params.id)))
      .handle("events", () => Effect.map(webhooks.eventTypes, ok))
      .handle("list", ({ query }) => listForTenant(query, (tenant, _filter, page) => webhooks.list(tenant, page)))
      .handle("create", ({ payload }) => withTenant((tenant) => webhooks.create(tenant, payload)))
      .handle("get", ({ params }) => withTenant((tenant) => webhooks.get(tenant, params.id)))
      .handle("update", ({ params, payload }) => withTenant((tenant) => webhooks.update(tenant, params.id, payload)))
      .handle("remove", ({ params }) =>
        withTenant((tenant) => Effect.as(webhooks.remove(tenant, params.id), { id: params.id, deleted: true as const })))
      .handle("rotateSecret", ({ params, payload }) =>
        withTenant((tenant) => webhooks.rotateSecret(tenant, params.id, payload ?? {})))
      .handle("publicKeys", ({ params }) => withTenant((tenant) => webhooks.publicKeys(tenant, params.id)))
      .handle("test", ({ params }) => withTenant((tenant) => webhooks.sendTest(tenant, params.id)))
      .handle("deliveries", ({ params, query }) =>
        listForTenant(query, (tenant, filter, page) => webhooks.listDeliveries(tenant, params.id, filter, page), {
          subscription: params.id
        }))
      .handle("delivery", ({ params }) => withTenant((tenant) => webhooks.getDelivery(tenant, params.id, params.deliveryId)))
      .handle("attempts", ({ params, query }) =>
        listForTenant(query, (tenant, _filter, page) => webhooks.listAttempts(tenant, params.id, params.deliveryId, page), {
          delivery: params.deliveryId
        }))
      .handle("redeliver", ({ params, payload }) =>
        domain(Effect.flatMap(currentTenant, (tenant) => webhooks.redeliver(tenant, params.id, params.deliveryId, payload ?? {}))))
  })
)
