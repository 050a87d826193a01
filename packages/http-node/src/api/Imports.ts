import { Schema } from "effect"
import { Multipart } from "effect/http"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ImportModel, Schemas } from "@opsplatform/core"
import { BadRequestError, ConflictError, NotFoundError, PayloadTooLargeError, UnsupportedMediaTypeError } from "./errors.ts"
import { Envelope, ListEnvelope, idParam, pageQuery } from "./envelope.ts"
import { upload } from "./requestBody.ts"
import { scope } from "./security.ts"

/**
 * The largest body of an upload: the file's limit plus room for a multipart
 * form's boundaries and fields (decided: docs/decisions.md, "Imports").
 */
export const MAX_IMPORT_BODY_BYTES = ImportModel.MAX_IMPORT_BYTES + 64 * 1024

/** The media types of an upload (the two the document declares); any other body has the API's 1 MiB and is answered 415. */
export const UPLOAD_MEDIA_TYPES = ["text/csv", "multipart/form-data"]

const idParams = { id: idParam("The import job id") }

export class ImportsApi extends HttpApiGroup.make("imports")
  .add(
    HttpApiEndpoint.get("list", "/imports", {
      query: pageQuery,
      success: ListEnvelope(ImportModel.ImportJob)
    }).pipe(scope("imports:read")),
    HttpApiEndpoint.get("get", "/imports/:id", {
      params: idParams,
      success: Envelope(ImportModel.ImportJob),
      error: NotFoundError
    }).pipe(scope("imports:read")),
    HttpApiEndpoint.get("errors", "/imports/:id/errors", {
      params: idParams,
      query: {
        format: Schema.optionalKey(Schema.Literals(["json", "csv"]).annotate({
          description: "csv answers text/csv (row,column,message), as does `Accept: text/csv`"
        }))
      },
      success: Envelope(Schema.Array(ImportModel.ImportIssue)),
      error: NotFoundError
    }).pipe(scope("imports:read")),
    HttpApiEndpoint.post("create", "/imports", {
      query: {
        entity: Schema.optionalKey(ImportModel.ImportEntity.annotate({ description: "What the rows are (required; or a multipart field)" })),
        preset: Schema.optionalKey(ImportModel.ImportPreset),
        filename: Schema.optionalKey(Schemas.Text(ImportModel.MAX_FILENAME_CHARS).annotate({ description: "The file's name, as shown on the job" })),
        mapping: Schema.optionalKey(Schema.String.annotate({
          description: "JSON object field → the file's column header, overriding the preset and the aliases, e.g. {\"name\":\"Firma\"}"
        }))
      },
      // Documents the two bodies; the handler reads the body itself (handleRaw), streaming it.
      payload: [
        Schema.String.annotate({ description: "The CSV file, in any of the encodings above" }).pipe(
          HttpApiSchema.asText({ contentType: "text/csv" })
        ),
        Schema.Struct({
          file: Multipart.SingleFileSchema.annotate({ description: "The CSV file" }),
          entity: Schema.optionalKey(ImportModel.ImportEntity),
          preset: Schema.optionalKey(ImportModel.ImportPreset),
          filename: Schema.optionalKey(Schemas.Text(ImportModel.MAX_FILENAME_CHARS)),
          mapping: Schema.optionalKey(Schema.String.annotate({ description: "JSON object field → the file's column header" }))
        }).pipe(HttpApiSchema.asMultipart())
      ],
      success: Envelope(ImportModel.ImportJob).pipe(HttpApiSchema.status(201)),
      error: [BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError]
    }).pipe(scope("imports:write"), upload({ maxBytes: MAX_IMPORT_BODY_BYTES, mediaTypes: UPLOAD_MEDIA_TYPES })).annotate(OpenApi.Description,
      "The file is the body: `text/csv` (any charset: UTF-8 with or without BOM, Windows-1250, ISO-8859-2), or " +
        "`multipart/form-data` with a `file` part (and optionally `entity`, `preset`, `filename`, `mapping` fields). " +
        "Up to 50 MiB and 200000 rows. The job comes back `ready` with its preview, or `failed` with the reason."),
    HttpApiEndpoint.post("apply", "/imports/:id/apply", {
      params: idParams,
      success: Envelope(ImportModel.ImportJob),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("imports:write")),
    HttpApiEndpoint.post("revert", "/imports/:id/revert", {
      params: idParams,
      success: Envelope(ImportModel.ImportJob),
      error: [NotFoundError, ConflictError]
    }).pipe(scope("imports:write"))
  )
  .annotateMerge(OpenApi.annotations({
    title: "Imports",
    description:
      "CSV imports of contacts, locations, fleet vehicles and expenses: previewed, applied in one transaction, reverted."
  }))
{}
