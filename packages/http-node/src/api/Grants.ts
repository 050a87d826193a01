import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { GrantModel } from "@opsplatform/core"
import { ConflictError, NotFoundError } from "./errors.ts"
import { Envelope, idParam, ListEnvelope, pageQuery } from "./envelope.ts"
import { scope } from "./security.ts"

const idParams = { id: idParam("The access grant id") }

export class GrantsApi extends HttpApiGroup.make("grants")
  .add(
    HttpApiEndpoint.get("list", "/cabinet/access-grants", {
      query: {
        ...pageQuery,
        role: Schema.optionalKey(GrantModel.GrantRole.annotate({ description: "Only grants where the caller is on this side" })),
        status: Schema.optionalKey(GrantModel.GrantStatus)
      },
      success: ListEnvelope(GrantModel.AccessGrant)
    }).pipe(scope("grants:read")),
    HttpApiEndpoint.get("get", "/cabinet/access-grants/:id", {
      params: idParams,
      success: Envelope(GrantModel.AccessGrant),
      error: NotFoundError
    }).pipe(scope("grants:read")),
    HttpApiEndpoint.post("create", "/cabinet/access-grants", {
      payload: GrantModel.AccessGrantCreate,
      success: Envelope(GrantModel.AccessGrant).pipe(HttpApiSchema.status(201)),
      error: ConflictError
    }).pipe(scope("grants:write")),
    HttpApiEndpoint.post("approve", "/cabinet/access-grants/:id/approve", {
      params: idParams,
      success: Envelope(GrantModel.AccessGrant),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("grants:write")),
    HttpApiEndpoint.post("revoke", "/cabinet/access-grants/:id/revoke", {
      params: idParams,
      success: Envelope(GrantModel.AccessGrant),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("grants:write"))
  )
  .annotateMerge(OpenApi.annotations({
    title: "Accountant access grants",
    description: "Access of an accountant's cabinet to a client's books, asked for by either side with the other's VAT " +
      "number (`PATCH /organization` `vat_number`), approved by the other side, revoked by either. Each grant is seen " +
      "from the caller's side (`role`). The side that asked sees only the number it asked for until the other side " +
      "approves, and a number no organization holds answers exactly as one that is held. While a grant is active the " +
      "cabinet's credentials act for the client with `Opsplatform-Organization: <client organization id>`; every step " +
      "and every such request is in the client's audit log."
  }))
{}
