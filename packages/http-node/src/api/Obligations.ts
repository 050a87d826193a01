import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ObligationModel } from "@opsplatform/core"
import { ConflictError, NotFoundError } from "./errors.ts"
import { Envelope, ListEnvelope, idParam, pageQuery } from "./envelope.ts"
import { scope } from "./security.ts"

const idParams = { id: idParam("The contract obligation id") }
const Obligation = ObligationModel.Obligation

export class ObligationsApi extends HttpApiGroup.make("obligations")
  .add(
    HttpApiEndpoint.get("list", "/contract-obligations", {
      query: { ...pageQuery, ...ObligationModel.ObligationFilter.fields },
      success: ListEnvelope(Obligation)
    }).pipe(scope("contracts:read")),
    HttpApiEndpoint.get("get", "/contract-obligations/:id", {
      params: idParams,
      success: Envelope(Obligation),
      error: NotFoundError
    }).pipe(scope("contracts:read")),
    HttpApiEndpoint.post("create", "/contract-obligations", {
      payload: ObligationModel.ObligationCreate,
      success: Envelope(Obligation).pipe(HttpApiSchema.status(201)),
      error: NotFoundError
    }).pipe(scope("contracts:write")),
    HttpApiEndpoint.patch("update", "/contract-obligations/:id", {
      params: idParams,
      payload: ObligationModel.ObligationUpdate,
      success: Envelope(Obligation),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("contracts:write")),
    HttpApiEndpoint.post("complete", "/contract-obligations/:id/complete", {
      params: idParams,
      // The body may be empty (read as null): completing without evidence sends none.
      payload: [ObligationModel.ObligationComplete, Schema.Null],
      success: Envelope(Obligation),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("contracts:write")),
    HttpApiEndpoint.post("reopen", "/contract-obligations/:id/reopen", {
      params: idParams,
      success: Envelope(Obligation),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("contracts:write")),
    HttpApiEndpoint.post("cancel", "/contract-obligations/:id/cancel", {
      params: idParams,
      success: Envelope(Obligation),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("contracts:write"))
  )
  .annotateMerge(OpenApi.annotations({
    title: "Contract obligations",
    description: "What a contract obliges us or the counterparty to do, by when. Statuses: pending → completed " +
      "(complete; a recurring obligation gets its next one) → pending (reopen); pending → cancelled (cancel). " +
      "Buckets: overdue, due_soon, upcoming, done, as of today in the organization's time zone."
  }))
{}
