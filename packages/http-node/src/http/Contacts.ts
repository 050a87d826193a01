import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Contacts } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { listForTenant, withTenant } from "./respond.ts"

export const ContactsHandlers = HttpApiBuilder.group(
  Api,
  "contacts",
  Effect.fn(function*(handlers) {
    const contacts = yield* Contacts.Contacts
    return handlers
      .handle("list", ({ query }) => listForTenant(query, (tenant, filter, page) => contacts.list(tenant, filter, page)))
      .handle("get", ({ params }) => withTenant((tenant) => contacts.get(tenant, params.id)))
      .handle("create", ({ payload }) => withTenant((tenant) => contacts.create(tenant, payload)))
      .handle("update", ({ params, payload }) => withTenant((tenant) => contacts.update(tenant, params.id, payload)))
      .handle("remove", ({ params }) =>
        withTenant((tenant) => Effect.as(contacts.remove(tenant, params.id), { id: params.id, deleted: true as const })))
  })
)
