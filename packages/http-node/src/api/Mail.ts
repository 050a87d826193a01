import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { MailModel } from "@opsplatform/core"
import { ConflictError, NotFoundError } from "./errors.ts"
import { Envelope, idParam, ListEnvelope, pageQuery } from "./envelope.ts"
import { scope } from "./security.ts"

const idParams = { id: idParam("The mailbox id") }

export class MailApi extends HttpApiGroup.make("mail")
  .add(
    HttpApiEndpoint.get("list", "/mailboxes", {
      query: { ...pageQuery, ...MailModel.MailboxFilter.fields },
      success: ListEnvelope(MailModel.Mailbox)
    }).pipe(scope("mail:read")),
    HttpApiEndpoint.get("get", "/mailboxes/:id", {
      params: idParams,
      success: Envelope(MailModel.Mailbox),
      error: NotFoundError
    }).pipe(scope("mail:read")),
    HttpApiEndpoint.post("create", "/mailboxes", {
      payload: MailModel.MailboxCreate,
      success: Envelope(MailModel.Mailbox).pipe(HttpApiSchema.status(201)),
      error: ConflictError
    }).pipe(scope("mail:write")),
    HttpApiEndpoint.patch("update", "/mailboxes/:id", {
      params: idParams,
      payload: MailModel.MailboxUpdate,
      success: Envelope(MailModel.Mailbox),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("mail:write")),
    HttpApiEndpoint.delete("remove", "/mailboxes/:id", {
      params: idParams,
      success: Envelope(Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) })),
      error: NotFoundError
    }).pipe(scope("mail:write"))
  )
  .annotateMerge(OpenApi.annotations({
    title: "Mailboxes",
    description: "Mailboxes synchronised over IMAP. New inbound messages of organization mailboxes raise `email.received`; " +
      "the IMAP password or token is sealed at rest and never returned."
  }))
{}
