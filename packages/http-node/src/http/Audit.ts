import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Audit } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { listForTenant } from "./respond.ts"

export const AuditHandlers = HttpApiBuilder.group(
  Api,
  "audit",
  Effect.fn(function*(handlers) {
    const audit = yield* Audit.Audit
    return handlers.handle("list", ({ query }) => listForTenant(query, (tenant, filter, page) => audit.list(tenant, filter, page)))
  })
)
