import { Effect, SchemaIssue } from "effect"
import { HttpApiMiddleware } from "effect/http-api"
import type { HttpApiError } from "effect/http-api"
import { apiError, BadRequestError } from "./errors.ts"

/** Renders request decoding failures as `validation_failed` / `invalid_json` envelopes. */
export class SchemaErrors extends HttpApiMiddleware.Service<SchemaErrors>()("@opsplatform/http-node/SchemaErrors", {
  error: BadRequestError
}) {}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const where: Record<HttpApiError.HttpApiSchemaError["kind"], string> = {
  Params: "path",
  Query: "query",
  Payload: "body",
  Headers: "headers",
  Body: "response",
  ResponseHeaders: "response"
}

/** One `{ field, issue }` per failing field of a decoding failure; `whole` names the field of an issue with no path. */
export const issueDetails = (cause: SchemaIssue.Issue, whole: string) => {
  const { issues } = formatter(cause)
  const seen = new Set<string>()
  const details: Array<{ field: string; issue: string }> = []
  for (const issue of issues) {
    const path = issue.path ?? []
    const field = path.length === 0 ? whole : path.map(String).join(".")
    const message = issue.message === "Missing key"
      ? "is required"
      : issue.message === "Expected no excess property"
      ? "is not a field of this request"
      : issue.message
    // One detail per failing field: the first issue found names what to fix.
    if (seen.has(field)) continue
    seen.add(field)
    details.push({ field, issue: message })
  }
  return details
}

/** One `{ field, issue }` per failing field; the field is the dotted path inside the body, query or path. */
export const schemaErrorDetails = (error: HttpApiError.HttpApiSchemaError) => issueDetails(error.cause.issue, where[error.kind])

export const SchemaErrorsLive = HttpApiMiddleware.layerSchemaErrorTransform(SchemaErrors, (error) => {
  if (error.kind === "Body" || error.kind === "ResponseHeaders") {
    // Our own response failed its schema: a defect, never the caller's fault.
    return Effect.die(error)
  }
  const details = schemaErrorDetails(error)
  if (error.kind === "Payload" && details.some((d) => d.issue === "Expected a valid JSON body")) {
    return Effect.flatMap(apiError(400, "invalid_json", "The request body is not valid JSON"), Effect.fail)
  }
  const message = details.length === 1
    ? `Invalid ${details[0]!.field}: ${details[0]!.issue}`
    : `${details.length} fields are invalid: ${details.map((d) => d.field).join(", ")}`
  return Effect.flatMap(apiError(400, "validation_failed", message, { details }), Effect.fail)
})
