import { Schema } from "effect"
import { IsoDateTime, isMaxChars, Uuid } from "../shared/schemas.ts"

export const ImportJobId = Uuid.pipe(Schema.brand("ImportJobId"))
export type ImportJobId = typeof ImportJobId.Type

/** What an import writes (decided: docs/decisions.md, "Imports"). */
export const ImportEntity = Schema.Literals(["contacts", "expenses", "locations", "fleet_vehicles"])
export type ImportEntity = typeof ImportEntity.Type

/**
 * The column layout a file is read with: `generic` matches headers by their
 * Romanian and English aliases; `smartbill` and `softpro` are the partner
 * lists of those programs (contacts only; layouts in docs/decisions.md).
 */
export const ImportPreset = Schema.Literals(["generic", "smartbill", "softpro"])
export type ImportPreset = typeof ImportPreset.Type

/** How the file arrived: a `text/csv` body, a multipart form, or the CLI. */
export const ImportSource = Schema.Literals(["upload", "multipart", "cli"])
export type ImportSource = typeof ImportSource.Type

/**
 * parsing → ready (preview stored) → running (apply under way) → completed →
 * reverted; parsing → failed when the file cannot be read at all, or when
 * the parse made no progress for PARSE_LEASE_MS (its process died).
 */
export const ImportStatus = Schema.Literals(["parsing", "ready", "running", "completed", "failed", "reverted"])
export type ImportStatus = typeof ImportStatus.Type

/** One problem of the file: its row (1 = the first data row; null for the file as a whole), its column, what is wrong. */
export const ImportIssue = Schema.Struct({
  row: Schema.NullOr(Schema.Int),
  column: Schema.NullOr(Schema.String),
  message: Schema.String
}).annotate({ identifier: "ImportIssue" })
export type ImportIssue = typeof ImportIssue.Type

/** A row as the preview shows it: its number, the key it matched by, and the fields it sets. */
export const ImportSample = Schema.Struct({
  row: Schema.Int,
  key: Schema.NullOr(Schema.String),
  fields: Schema.Record(Schema.String, Schema.NullOr(Schema.String))
}).annotate({ identifier: "ImportSample" })
export type ImportSample = typeof ImportSample.Type

export const ImportPreview = Schema.Struct({
  news: Schema.Int,
  updates: Schema.Int,
  skips: Schema.Int,
  errors: Schema.Int,
  samples: Schema.Struct({
    news: Schema.Array(ImportSample),
    updates: Schema.Array(ImportSample),
    skips: Schema.Array(ImportSample),
    errors: Schema.Array(ImportIssue)
  })
}).annotate({ identifier: "ImportPreview" })
export type ImportPreview = typeof ImportPreview.Type

/** Which file column feeds each field, as resolved from the preset, the aliases and the caller's mapping. */
export const ImportColumns = Schema.Record(Schema.String, Schema.String)

export const ImportJob = Schema.Struct({
  id: ImportJobId,
  entity: ImportEntity,
  preset: ImportPreset,
  filename: Schema.String,
  source: ImportSource,
  status: ImportStatus,
  encoding: Schema.NullOr(Schema.String).annotate({ description: "Detected encoding: UTF-8, windows-1250 or ISO-8859-2" }),
  delimiter: Schema.NullOr(Schema.String).annotate({ description: "Detected delimiter: , ; or a tab" }),
  mapping: ImportColumns.annotate({ description: "The column mapping the caller gave (field → header)" }),
  columns: ImportColumns.annotate({ description: "The mapping used: field → the file's header" }),
  total_rows: Schema.Int,
  processed_rows: Schema.Int.annotate({ description: "Rows parsed (while parsing) or written (after an apply)" }),
  imported_count: Schema.Int,
  updated_count: Schema.Int,
  skipped_count: Schema.Int,
  error_count: Schema.Int,
  preview: ImportPreview,
  failure: Schema.NullOr(Schema.Struct({ code: Schema.String, message: Schema.String })).annotate({
    description: "Why a failed job could not read its file"
  }),
  applied_at: Schema.NullOr(IsoDateTime),
  reverted_at: Schema.NullOr(IsoDateTime),
  created_at: IsoDateTime,
  updated_at: IsoDateTime.annotate({ description: "When the job last changed or made progress (a parse updates it every 1000 rows)" }),
  finished_at: Schema.NullOr(IsoDateTime)
}).annotate({ identifier: "ImportJob" })
export type ImportJob = typeof ImportJob.Type

/** Limits of one import (decided: docs/decisions.md, "Imports"). */
export const MAX_IMPORT_BYTES = 50 * 1024 * 1024
export const MAX_IMPORT_ROWS = 200_000
/** Characters of one record (a line's fields together): csv-parse stops past it, so no cell can grow without bound. */
export const MAX_RECORD_CHARS = 64 * 1024
/** Characters of one header cell: a longer first line is not a header. */
export const MAX_HEADER_CHARS = 256
/** Characters of a job's filename, however it is given (query, multipart field, the file part's own name, the CLI). */
export const MAX_FILENAME_CHARS = 255

/** What a caller says about a new import (the file comes apart). */
export const ImportCreate = Schema.Struct({
  entity: ImportEntity,
  preset: Schema.optionalKey(ImportPreset),
  filename: Schema.optionalKey(Schema.String.check(isMaxChars(MAX_FILENAME_CHARS))),
  mapping: Schema.optionalKey(ImportColumns)
}).annotate({ identifier: "ImportCreate" })
export type ImportCreate = typeof ImportCreate.Type

/**
 * A job `parsing` without progress for this long lost its process and is
 * marked `failed` when next read (decided: docs/decisions.md, "Imports").
 */
export const PARSE_LEASE_MS = 5 * 60_000
/** Rows of each kind the preview keeps as samples. */
export const SAMPLE_SIZE = 5

/** A parsed CSV record: its line number in the file and its fields, decoded and normalised. */
export interface CsvRecord {
  readonly line: number
  readonly fields: ReadonlyArray<string>
}

/** Why a file cannot be read at all; the job fails with it. */
export class ImportFileError extends Schema.TaggedError<ImportFileError>()("ImportFileError", {
  code: Schema.String,
  message: Schema.String
}) {}
