import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { TenancyModel } from "@opsplatform/core"
import { Envelope } from "./envelope.ts"
import { scope } from "./security.ts"

export const OrganizationUpdate = Schema.Struct({
  name: Schema.optionalKey(TenancyModel.OrganizationName),
  time_zone: Schema.optionalKey(Schema.String.check(
    Schema.makeFilter((zone: string) => TenancyModel.isValidTimeZone(zone) || "must be an IANA time zone such as Europe/Bucharest")
  ).annotate({
    description: "IANA time zone, e.g. Europe/Bucharest: the organization's dates (obligation buckets, notices) are read in it"
  })),
  escalation_delay_days: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 365 })).annotate({
    description: "Days an obligation stays overdue before it is escalated (0 to 365)"
  }))
}).annotate({ identifier: "OrganizationUpdate" })

export class OrganizationApi extends HttpApiGroup.make("organization")
  .add(
    HttpApiEndpoint.get("get", "/organization", {
      success: Envelope(TenancyModel.Organization)
    }).pipe(scope("organization:read")),
    HttpApiEndpoint.patch("update", "/organization", {
      payload: OrganizationUpdate,
      success: Envelope(TenancyModel.Organization)
    }).pipe(scope("organization:write"))
  )
  .annotateMerge(OpenApi.annotations({
    title: "Organization",
    description: "The caller's organization and its settings, shared by its live and sandbox environments. " +
      "Only a live credential changes them."
  }))
{}
