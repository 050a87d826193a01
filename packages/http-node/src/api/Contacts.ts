import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ContactModel } from "@opsplatform/core"
import { ConflictError, NotFoundError } from "./errors.ts"
import { Envelope, idParam, ListEnvelope, pageQuery } from "./envelope.ts"
import { scope } from "./security.ts"

const idParams = { id: idParam("The contact id") }

export class ContactsApi extends HttpApiGroup.make("contacts")
  .add(
    HttpApiEndpoint.get("list", "/contacts", {
      query: { ...pageQuery, ...ContactModel.ContactFilter.fields },
      success: ListEnvelope(ContactModel.Contact)
    }).pipe(scope("contacts:read")),
    HttpApiEndpoint.get("get", "/contacts/:id", {
      params: idParams,
      success: Envelope(ContactModel.Contact),
      error: NotFoundError
    }).pipe(scope("contacts:read")),
    HttpApiEndpoint.post("create", "/contacts", {
      payload: ContactModel.ContactCreate,
      success: Envelope(ContactModel.Contact).pipe(HttpApiSchema.status(201)),
      error: ConflictError
    }).pipe(scope("contacts:write")),
    HttpApiEndpoint.patch("update", "/contacts/:id", {
      params: idParams,
      payload: ContactModel.ContactUpdate,
      success: Envelope(ContactModel.Contact),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("contacts:write")),
    HttpApiEndpoint.delete("remove", "/contacts/:id", {
      params: idParams,
      success: Envelope(Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) })),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("contacts:write"))
  )
  .annotateMerge(OpenApi.annotations({
    title: "Contacts",
    description: "Customers and suppliers. A Romanian VAT number is a CUI/CIF checked with its control digit and " +
      "stored without the RO prefix; one contact per VAT number. A contact that invoices name cannot be deleted."
  }))
{}
