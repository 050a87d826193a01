import { NodeServices } from "@effect/platform-node"
import { Effect, Schema, Stream } from "effect"
import { HttpServerResponse, Multipart } from "effect/http"
import type { HttpServerRequest } from "effect/http/HttpServerRequest"
import { HttpApiBuilder } from "effect/http-api"
import * as fs from "node:fs"
import { Errors, ImportModel, Imports } from "@opsplatform/core"
import { Api } from "../api/Api.ts"
import { MAX_IMPORT_BODY_BYTES } from "../api/Imports.ts"
import { mediaTypeOf } from "../api/requestBody.ts"
import { currentTenant, ok } from "../api/envelope.ts"
import { apiError, type ApiErrorOf, domain } from "../api/errors.ts"
import { openCsv } from "../imports/csvFile.ts"
import { listForTenant, withTenant } from "./respond.ts"

/**
 * A CSV cell: a text a spreadsheet would run as a formula (starting with `=`,
 * `+`, `-`, `@`, a tab or a carriage return) gets a leading `'` so it is shown
 * as text (OWASP, "CSV Injection"), then RFC 4180 quoting when it holds a
 * delimiter, a quote or a line break.
 */
export const csvCell = (value: string | number | null): string => {
  const raw = value === null ? "" : String(value)
  const text = /^[\t\r+\-=@]/.test(raw) ? `'${raw}` : raw
  return /[\n\r",]/.test(text) ? `"${text.replace(/"/g, "\"\"")}"` : text
}

/** The errors of a job as CSV: row, column, message (decided: docs/decisions.md, "Imports"). */
export const issuesCsv = (issues: ReadonlyArray<ImportModel.ImportIssue>): string =>
  ["row,column,message", ...issues.map((i) => [i.row, i.column, i.message].map(csvCell).join(","))].join("\r\n") + "\r\n"

const decodeEntity = Schema.decodeUnknownOption(ImportModel.ImportEntity)
const decodePreset = Schema.decodeUnknownOption(ImportModel.ImportPreset)

const parseMapping = (text: string | undefined) => {
  if (text === undefined || text === "") return Effect.succeed(undefined)
  try {
    const value: unknown = JSON.parse(text)
    if (typeof value === "object" && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === "string")) {
      return Effect.succeed(value as Record<string, string>)
    }
  } catch {
    // reported below
  }
  return Effect.fail(Errors.ValidationFailed.field("mapping", "must be a JSON object of field → column header, e.g. {\"name\":\"Firma\"}"))
}

/**
 * A multipart upload is one `file` part and a few short fields (`entity`,
 * `preset`, `filename`, `mapping`): the parser stops at the eighth part, at a
 * field over 16 KiB and at a file over the import size, so a form of
 * thousands of parts never becomes thousands of temporary files (decided:
 * docs/decisions.md, "Imports").
 */
export const MULTIPART_LIMITS = {
  maxParts: 8,
  maxFieldSize: 16 * 1024,
  maxFileSize: ImportModel.MAX_IMPORT_BYTES,
  maxTotalSize: MAX_IMPORT_BODY_BYTES
} as const

const multipartLimits = Multipart.limitsServices(MULTIPART_LIMITS)

const multipartRefusal = (error: Multipart.MultipartError): Effect.Effect<never, ApiErrorOf<400> | ApiErrorOf<413>> =>
  error.reason._tag === "Parse" || error.reason._tag === "InternalError"
    ? Effect.flatMap(
      apiError(400, "validation_failed", "Invalid body: is not a readable multipart/form-data body", {
        details: [{ field: "body", issue: "is not a readable multipart/form-data body" }]
      }),
      Effect.fail
    )
    : Effect.flatMap(
      apiError(
        413,
        "payload_too_large",
        `The form exceeds the upload's limits: one file part of at most ${ImportModel.MAX_IMPORT_BYTES} bytes and at most ` +
          `${MULTIPART_LIMITS.maxParts - 1} fields of at most ${MULTIPART_LIMITS.maxFieldSize} bytes`
      ),
      Effect.fail
    )

/** The file and the fields of an upload: a CSV body, or a multipart form with exactly one `file` part. */
const readUpload = (request: HttpServerRequest) =>
  Effect.gen(function*() {
    const type = mediaTypeOf(request.headers["content-type"])
    if (type === "multipart/form-data") {
      // Parts are stored in temporary files (removed when the request's scope ends), so memory stays bounded.
      const form: Multipart.Persisted = yield* request.multipart.pipe(Effect.provideContext(multipartLimits), Effect.catch(multipartRefusal))
      const fields: Record<string, string> = {}
      for (const [key, value] of Object.entries(form)) if (typeof value === "string") fields[key] = value
      const files = form.file
      if (!Array.isArray(files) || files.length === 0 || typeof files[0] === "string") {
        return yield* Errors.ValidationFailed.field("file", "is required: send the CSV as the multipart part named file")
      }
      const others = Object.entries(form).filter(([key, value]) => key !== "file" && typeof value !== "string")
      if (files.length > 1 || others.length > 0) {
        return yield* Errors.ValidationFailed.field(others[0]?.[0] ?? "file", "one file per upload: send a single part named file")
      }
      const file = files[0]!
      return {
        source: "multipart" as const,
        fields,
        filename: file.name,
        bytes: fs.createReadStream(file.path) as AsyncIterable<Uint8Array>
      }
    }
    if (type === "text/csv") {
      const fields: Record<string, string> = {}
      return { source: "upload" as const, fields, filename: undefined, bytes: Stream.toAsyncIterable(request.stream) }
    }
    return yield* Effect.fail("unsupported" as const)
  })

/** A body of another media type: 415 in the envelope. */
const unsupportedAs415 = <A, E, R>(
  self: Effect.Effect<A, E | "unsupported", R>
): Effect.Effect<A, Exclude<E, "unsupported"> | ApiErrorOf<415>, R> =>
  Effect.catch(self, (e): Effect.Effect<never, Exclude<E, "unsupported"> | ApiErrorOf<415>> =>
    e === "unsupported"
      ? Effect.flatMap(
        apiError(415, "unsupported_media_type", "Send the file as text/csv, or as multipart/form-data with a file part"),
        (error) => Effect.fail(error)
      )
      : Effect.fail(e as Exclude<E, "unsupported">))

export const ImportsHandlers = HttpApiBuilder.group(
  Api,
  "imports",
  Effect.fn(function*(handlers) {
    const imports = yield* Imports.Imports
    return handlers
      .handle("list", ({ query }) => listForTenant(query, (tenant, _filter, page) => imports.list(tenant, page)))
      .handle("get", ({ params }) => withTenant((tenant) => imports.get(tenant, params.id)))
      .handleRaw("errors", ({ params, query, request }) =>
        domain(Effect.gen(function*() {
          const tenant = yield* currentTenant
          const issues = yield* imports.errors(tenant, params.id)
          const wantsCsv = query.format === "csv" ||
            (query.format === undefined && (request.headers.accept ?? "").toLowerCase().includes("text/csv"))
          return wantsCsv
            ? HttpServerResponse.text(issuesCsv(issues), {
              contentType: "text/csv; charset=utf-8",
              // A download, never a page the browser renders (decided: docs/decisions.md, "Imports").
              headers: { "content-disposition": `attachment; filename="import-${params.id}-errors.csv"` }
            })
            : ok(issues)
        })))
      .handleRaw("create", ({ query, request }) =>
        unsupportedAs415(domain(Effect.gen(function*() {
          const tenant = yield* currentTenant
          const upload = yield* readUpload(request)
          const entityText = query.entity ?? upload.fields.entity
          const entity = decodeEntity(entityText)
          if (entity._tag === "None") {
            return yield* Errors.ValidationFailed.field("entity", "is required: contacts, expenses, locations or fleet_vehicles")
          }
          const presetText = query.preset ?? upload.fields.preset
          const preset = presetText === undefined ? undefined : decodePreset(presetText)
          if (preset !== undefined && preset._tag === "None") {
            return yield* Errors.ValidationFailed.field("preset", "must be generic, smartbill or softpro")
          }
          const mapping = yield* parseMapping(query.mapping ?? upload.fields.mapping)
          const job = yield* imports.create(tenant, {
            entity: entity.value,
            preset: preset?.value,
            filename: query.filename ?? upload.fields.filename ?? upload.filename,
            source: upload.source,
            mapping
          }, openCsv(upload.bytes))
          return ok(job)
        }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)))))
      .handle("apply", ({ params }) => withTenant((tenant) => imports.apply(tenant, params.id)))
      .handle("revert", ({ params }) => withTenant((tenant) => imports.revert(tenant, params.id)))
  })
)
