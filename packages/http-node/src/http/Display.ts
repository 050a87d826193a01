import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Devices, Display, DisplayRules } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { ok } from "../api/envelope.ts"
import { domain } from "../api/errors.ts"
import { announceRefusal } from "../api/rateLimit.ts"
import { CurrentRequestId } from "../api/requestContext.ts"
import { CurrentPrincipal } from "../api/security.ts"
import { listForTenant, withTenant } from "./respond.ts"

/** The caller as the display area audits it: the credential, and the request id its log line carries. */
const caller = Effect.all({ principal: CurrentPrincipal, requestId: CurrentRequestId })

export const DisplayHandlers = HttpApiBuilder.group(
  Api,
  "display",
  Effect.fn(function*(handlers) {
    const devices = yield* Devices.Devices
    const display = yield* Display.Display
    return handlers
      .handle("list", ({ query }) => listForTenant(query, (tenant, filter, page) => devices.list(tenant, filter, page)))
      .handle("create", ({ payload }) => withTenant((tenant) => devices.create(tenant, payload)))
      .handle("get", ({ params }) => withTenant((tenant) => devices.get(tenant, params.id)))
      .handle("update", ({ params, payload }) => withTenant((tenant) => devices.update(tenant, params.id, payload)))
      .handle("remove", ({ params }) =>
        withTenant((tenant) => Effect.as(devices.remove(tenant, params.id), { id: params.id, deleted: true as const })))
      .handle("rotateToken", ({ params, payload }) =>
        withTenant((tenant) => devices.rotateToken(tenant, params.id, payload ?? {})))
      .handle("setPin", ({ params, payload }) => withTenant((tenant) => devices.setPin(tenant, params.id, payload.pin)))
      .handle("clearPin", ({ params }) => withTenant((tenant) => devices.clearPin(tenant, params.id)))
      .handle("unlock", ({ payload }) =>
        domain(
          Effect.flatMap(caller, (c) => display.unlock(c, payload.pin)).pipe(
            announceRefusal(DisplayRules.unlockPolicy),
            Effect.map(ok)
          )
        ))
      .handle("ask", ({ payload }) =>
        domain(
          Effect.flatMap(caller, (c) => display.ask(c, payload)).pipe(
            announceRefusal(DisplayRules.assistantPolicy),
            Effect.map(ok)
          )
        ))
  })
)
