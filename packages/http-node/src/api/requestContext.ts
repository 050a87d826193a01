import { Context } from "effect"

/** The request id of the request being served, set by the server middleware. */
export const CurrentRequestId = Context.Reference<string>("@opsplatform/http-node/CurrentRequestId", {
  defaultValue: () => "req_unknown"
})

/** Per-request facts for the request's log line; the authentication middleware fills them in. */
export const RequestLogFacts = Context.Reference<{ credentialId?: string; organizationId?: string; actorOrganizationId?: string }>(
  "@opsplatform/http-node/RequestLogFacts",
  { defaultValue: () => ({}) }
)
