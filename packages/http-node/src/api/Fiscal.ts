import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { FiscalModel } from "@opsplatform/core"
import { NotFoundError } from "./errors.ts"
import { idParam, ListEnvelope, pageQuery } from "./envelope.ts"
import { scope } from "./security.ts"

export class FiscalApi extends HttpApiGroup.make("fiscal")
  .add(
    HttpApiEndpoint.get("history", "/contacts/:id/fiscal-history", {
      params: { id: idParam("The contact id") },
      query: pageQuery,
      success: ListEnvelope(FiscalModel.FiscalSnapshot),
      error: NotFoundError
    }).pipe(scope("contacts:read"))
  )
  .annotateMerge(OpenApi.annotations({
    title: "Fiscal status",
    description: "What the tax authority (ANAF) published about a customer over time. Customers with open issued " +
      "invoices are checked daily; the first check records a baseline, later ones that find changes publish " +
      "contact.fiscal_status_changed. The contact itself shows the last status as fiscal_status."
  }))
{}
