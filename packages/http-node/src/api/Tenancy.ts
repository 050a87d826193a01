import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { TenancyModel } from "@opsplatform/core"
import { Envelope } from "./envelope.ts"
import { ConflictError, NotFoundError } from "./errors.ts"
import { scope } from "./security.ts"

export class TenancyApi extends HttpApiGroup.make("tenancy")
  .add(
    HttpApiEndpoint.get("get", "/organization", {
      success: Envelope(TenancyModel.Organization),
      error: NotFoundError
    }).pipe(scope("organization:read")),
    HttpApiEndpoint.patch("update", "/organization", {
      payload: TenancyModel.OrganizationUpdate,
      success: Envelope(TenancyModel.Organization),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("organization:write"))
  )
  .annotateMerge(OpenApi.annotations({
    title: "Organization",
    description: "The caller's organization and its settings, shared by its live and sandbox environments. " +
      "Only a live credential changes them. `vat_number` is the organization's Romanian CUI, by which accountant " +
      "access grants name it; one organization per number."
  }))
{}
