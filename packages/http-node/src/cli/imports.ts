import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { Errors, Imports, Schemas, Tenancy } from "@opsplatform/core"
import * as fs from "node:fs"
import * as path from "node:path"
import { openCsv } from "../imports/csvFile.ts"
import { progressBar } from "./progress.ts"
import { failCommand } from "./process.ts"
import { printJson, withCore } from "./shared.ts"

/** The caller's column mapping: a JSON object of field → the file's header. */
const mappingFlag = (text: Option.Option<string>) => {
  if (Option.isNone(text)) return Effect.succeed(undefined)
  try {
    const value: unknown = JSON.parse(text.value)
    if (typeof value === "object" && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === "string")) {
      return Effect.succeed(value as Record<string, string>)
    }
  } catch {
    // reported below
  }
  return Effect.fail(Errors.ValidationFailed.field("mapping", "must be a JSON object of field → column header, e.g. {\"name\":\"Firma\"}"))
}

/** The file's bytes, counting how many were read so far (the parse bar's measure). */
const countingReader = (file: string) => {
  let read = 0
  const stream = fs.createReadStream(file)
  const bytes = async function*() {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      read += chunk.length
      yield chunk as Uint8Array
    }
  }
  return { bytes: bytes(), read: () => read }
}

/** A log line (JSON on stderr) per batch: what an operator's log, or a supervisor, sees of a long import. */
const logProgress = (phase: "parse" | "apply", rows: number, jobId?: string) =>
  Effect.logInfo("import progress").pipe(Effect.annotateLogs({ phase, rows, ...(jobId === undefined ? {} : { job_id: jobId }) }))

/**
 * `opsplatform import FILE --org O --entity E [--env live] [--preset P] [--mapping JSON] [--apply]`:
 * the same import service as `POST /v1/imports` (and `/apply`), against the
 * database the environment names. Progress bars on stderr (parse: bytes read;
 * apply: rows written), the job as JSON on stdout. A job that fails to read
 * its file is printed too, with exit status 1.
 */
export const importCommand = Command.make("import", {
  file: Argument.File("file", { mustExist: true }).pipe(Argument.withDescription("The CSV file")),
  org: Flag.String("org").pipe(Flag.withDescription("Organization id")),
  env: Flag.Literals("env", ["live", "sandbox"]).pipe(Flag.withDescription("Environment (default live)"), Flag.withDefault("live")),
  entity: Flag.Literals("entity", ["contacts", "expenses", "locations", "fleet_vehicles"]).pipe(
    Flag.withDescription("What the rows are")
  ),
  preset: Flag.Literals("preset", ["generic", "smartbill", "softpro"]).pipe(
    Flag.withDescription("The column layout (default generic: headers matched by their Romanian and English aliases)"),
    Flag.optional
  ),
  mapping: Flag.String("mapping").pipe(
    Flag.withDescription("JSON object field → the file's column header, overriding the preset and the aliases"),
    Flag.optional
  ),
  apply: Flag.Boolean("apply").pipe(Flag.withDescription("Apply the import once its preview is ready"), Flag.withDefault(false))
}, (flags) =>
  withCore(Effect.gen(function*() {
    if (!Schemas.isUuid(flags.org)) return yield* new Errors.NotFound({ resource: "organization", id: flags.org })
    yield* (yield* Tenancy.Tenancy).getOrganization(flags.org)
    const mapping = yield* mappingFlag(flags.mapping)
    const imports = yield* Imports.Imports
    const tenant = { organizationId: flags.org, environment: flags.env }
    const size = fs.statSync(flags.file).size
    const reader = countingReader(flags.file)
    const parsing = progressBar("parse", size)
    let bytesShown = 0
    let job = yield* imports.create(tenant, {
      entity: flags.entity,
      preset: Option.getOrUndefined(flags.preset),
      filename: path.basename(flags.file),
      source: "cli",
      mapping
    }, openCsv(reader.bytes), (rows) => {
      const step = reader.read() - bytesShown
      bytesShown += step
      return Effect.andThen(parsing.advance(step, `${rows} rows`), logProgress("parse", rows))
    }).pipe(
      Effect.ensuring(parsing.done)
    )
    if (flags.apply && job.status === "ready") {
      const applying = progressBar("apply", job.preview.news + job.preview.updates + job.preview.skips)
      let written = 0
      job = yield* imports.apply(tenant, job.id, (rows) => {
        const step = rows - written
        written = rows
        return Effect.andThen(applying.advance(step, `${rows} rows`), logProgress("apply", rows, job.id))
      }).pipe(Effect.ensuring(applying.done))
    }
    yield* printJson(job)
    if (job.status === "failed") yield* failCommand
  }))).pipe(
    Command.withDescription(
      "Import a CSV file (contacts, expenses, locations, fleet_vehicles): preview it, and with --apply write it; " +
        "progress on stderr (on a terminal), the job as JSON on stdout"
    )
  )
