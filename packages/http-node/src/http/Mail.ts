import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Mailboxes } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { listForTenant, withTenant } from "./respond.ts"

export const MailHandlers = HttpApiBuilder.group(
  Api,
  "mail",
  Effect.fn(function*(handlers) {
    const mailboxes = yield* Mailboxes.Mailboxes
    return handlers
      .handle("list", ({ query }) => listForTenant(query, (tenant, filter, page) => mailboxes.list(tenant, filter, page)))
      .handle("get", ({ params }) => withTenant((tenant) => mailboxes.get(tenant, params.id)))
      .handle("create", ({ payload }) => withTenant((tenant) => mailboxes.create(tenant, payload)))
      .handle("update", ({ params, payload }) => withTenant((tenant) => mailboxes.update(tenant, params.id, payload)))
      .handle("remove", ({ params }) =>
        withTenant((tenant) => Effect.as(mailboxes.remove(tenant, params.id), { id: params.id, deleted: true as const })))
  })
)
