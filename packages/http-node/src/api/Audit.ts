import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { AuditModel } from "@opsplatform/core"
import { ListEnvelope, pageQuery } from "./envelope.ts"
import { scope } from "./security.ts"

export class AuditApi extends HttpApiGroup.make("audit")
  .add(
    HttpApiEndpoint.get("list", "/audit-events", {
      query: { ...pageQuery, ...AuditModel.AuditFilter.fields },
      success: ListEnvelope(AuditModel.AuditEvent)
    }).pipe(scope("audit:read"))
  )
  .annotateMerge(OpenApi.annotations({
    title: "Audit",
    description: "The organization environment's audit log, newest first: who did what, to which resource, how it " +
      "ended, with the request id. It never holds a token, a secret or a PIN."
  }))
{}
