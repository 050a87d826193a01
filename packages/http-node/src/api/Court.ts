import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { CourtModel } from "@opsplatform/core"
import { ConflictError, NotFoundError } from "./errors.ts"
import { DeletedEnvelope, Envelope, idParam, ListEnvelope, pageQuery } from "./envelope.ts"
import { scope } from "./security.ts"

const idParams = { id: idParam("The court case id") }
const hearingParams = { ...idParams, hearingId: idParam("The hearing id") }

export class CourtApi extends HttpApiGroup.make("court")
  .add(
    HttpApiEndpoint.get("list", "/court-cases", {
      query: { ...pageQuery, ...CourtModel.CourtCaseFilter.fields },
      success: ListEnvelope(CourtModel.CourtCase)
    }).pipe(scope("court:read")),
    HttpApiEndpoint.get("get", "/court-cases/:id", {
      params: idParams,
      success: Envelope(CourtModel.CourtCase),
      error: NotFoundError
    }).pipe(scope("court:read")),
    HttpApiEndpoint.post("create", "/court-cases", {
      payload: CourtModel.CourtCaseCreate,
      success: Envelope(CourtModel.CourtCase).pipe(HttpApiSchema.status(201)),
      error: ConflictError
    }).pipe(scope("court:write")),
    HttpApiEndpoint.patch("update", "/court-cases/:id", {
      params: idParams,
      payload: CourtModel.CourtCaseUpdate,
      success: Envelope(CourtModel.CourtCase),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("court:write")),
    HttpApiEndpoint.delete("remove", "/court-cases/:id", {
      params: idParams,
      success: DeletedEnvelope,
      error: NotFoundError
    }).pipe(scope("court:write")).annotateMerge(OpenApi.annotations({ description: "Removes the case with its hearings" })),
    HttpApiEndpoint.post("addHearing", "/court-cases/:id/hearings", {
      params: idParams,
      payload: CourtModel.HearingCreate,
      success: Envelope(CourtModel.Hearing).pipe(HttpApiSchema.status(201)),
      error: NotFoundError
    }).pipe(scope("court:write")).annotateMerge(OpenApi.annotations({
      description: "Emits court_case.hearing_added (the hearing's id, case_id, hearing_date and court only)"
    })),
    HttpApiEndpoint.get("listHearings", "/court-cases/:id/hearings", {
      params: idParams,
      query: pageQuery,
      success: ListEnvelope(CourtModel.Hearing),
      error: NotFoundError
    }).pipe(scope("court:read")),
    HttpApiEndpoint.patch("updateHearing", "/court-cases/:id/hearings/:hearingId", {
      params: hearingParams,
      payload: CourtModel.HearingUpdate,
      success: Envelope(CourtModel.Hearing),
      error: NotFoundError
    }).pipe(scope("court:write")),
    HttpApiEndpoint.delete("removeHearing", "/court-cases/:id/hearings/:hearingId", {
      params: hearingParams,
      success: DeletedEnvelope,
      error: NotFoundError
    }).pipe(scope("court:write"))
  )
  .annotateMerge(OpenApi.annotations({
    title: "Court cases",
    description: "The organization's court cases by their Romanian file number (e.g. 1234/3/2026, one case per number), " +
      "with their parties and hearings."
  }))
{}
