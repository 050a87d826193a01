import { Clock, Context, Effect, Fiber, Layer, Stream } from "effect"
import type { ContactRepo } from "../contacts/ContactRepo.ts"
import type { Outbox } from "../events/Outbox.ts"
import type { ExpenseRepo } from "../expenses/ExpenseRepo.ts"
import type { FleetRepo } from "../fleet/FleetRepo.ts"
import type { LocationRepo } from "../locations/LocationRepo.ts"
import { Conflict, InvalidTransition, type NotFound, ValidationFailed } from "../shared/errors.ts"
import { Ids } from "../shared/Ids.ts"
import { findOr404 } from "../shared/lookup.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import type { Tenant } from "../shared/tenant.ts"
import { exceedsCharacters } from "../shared/schemas.ts"
import { nowIso } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { type ImportChange, ImportRepo, type StagedRow, type TargetRecord } from "./ImportRepo.ts"
import {
  type CsvRecord,
  type ImportEntity,
  ImportFileError,
  type ImportIssue,
  type ImportJob,
  ImportJobId,
  type ImportPreset,
  type ImportSample,
  type ImportSource,
  MAX_FILENAME_CHARS,
  MAX_HEADER_CHARS,
  MAX_IMPORT_ROWS,
  PARSE_LEASE_MS,
  SAMPLE_SIZE
} from "./model.ts"
import { entitySpecs, matchKey, presets, resolveColumns, rowTexts, type RowFields, showValue } from "./rules.ts"
import { type ImportTarget, importTargets } from "./targets.ts"

/** A CSV file opened for reading: what was detected, and its records (the header first). */
export interface CsvFile {
  readonly encoding: string
  readonly delimiter: string
  readonly records: Stream.Stream<CsvRecord, ImportFileError>
}

export interface ImportInput {
  readonly entity: ImportEntity
  readonly preset?: ImportPreset | undefined
  readonly filename?: string | undefined
  readonly source: ImportSource
  readonly mapping?: Readonly<Record<string, string>> | undefined
}

/** Told how far a long step got: rows parsed, or rows written. */
export type OnProgress = (processedRows: number) => Effect.Effect<void>

/** Rows read, matched and staged per round trip; rows written per round trip on apply. */
const BATCH = 1000

/** Batches whose statements may still be running while the parse reads on. */
const IN_FLIGHT = 2

/** How often a parse writes its progress (`processed_rows`, and the heartbeat `updated_at`) to the job. */
const PROGRESS_SAVE_MS = 250

/** Whether every text of the row is empty. */
const allEmpty = (raw: Readonly<Record<string, string>>): boolean => {
  for (const k in raw) if (raw[k] !== "") return false
  return true
}

/** The fields the row would change on `current`. */
const changedFields = (current: Readonly<Record<string, unknown>>, fields: RowFields): ReadonlyArray<string> =>
  Object.entries(fields).filter(([k, v]) => (current[k] ?? null) !== v).map(([k]) => k)

const sample = (row: StagedRow): ImportSample => ({
  row: row.row,
  key: row.key,
  fields: Object.fromEntries(Object.entries(row.fields).map(([k, v]) => [k, showValue(v)]))
})

/**
 * An issue as stored names the field it is about (`vat_number`); shown, it
 * names the file's column for that field, which the job holds once
 * (`columns`), rather than every issue row repeating the header's text.
 */
const withHeader = (job: ImportJob, issue: ImportIssue): ImportIssue =>
  issue.column === null ? issue : { ...issue, column: job.columns[issue.column] ?? issue.column }

const emptyPreview = { news: 0, updates: 0, skips: 0, errors: 0, samples: { news: [], updates: [], skips: [], errors: [] } }

/**
 * CSV imports into contacts, locations, fleet vehicles and expenses: a job
 * parses its file into a preview (nothing written to the targets), an apply
 * writes every valid row in one transaction and records what it did, a revert
 * undoes exactly that. The targets are read and written through their areas'
 * repositories (`targets.ts`). Decisions: docs/decisions.md, "Imports".
 */
export class Imports extends Context.Service<Imports, {
  /** Creates the job and parses the file into its preview; a file that cannot be read leaves a failed job. */
  readonly create: (
    tenant: Tenant,
    input: ImportInput,
    file: Effect.Effect<CsvFile, ImportFileError>,
    onProgress?: OnProgress
  ) => Effect.Effect<ImportJob, ValidationFailed>
  readonly get: (tenant: Tenant, id: string) => Effect.Effect<ImportJob, NotFound>
  readonly list: (tenant: Tenant, page: PageRequest) => Effect.Effect<Page<ImportJob>>
  readonly errors: (tenant: Tenant, id: string) => Effect.Effect<ReadonlyArray<ImportIssue>, NotFound>
  readonly apply: (tenant: Tenant, id: string, onProgress?: OnProgress) => Effect.Effect<ImportJob, NotFound | InvalidTransition | Conflict>
  readonly revert: (tenant: Tenant, id: string) => Effect.Effect<ImportJob, NotFound | InvalidTransition | Conflict>
}>()("@opsplatform/core/imports/Imports") {
  static readonly layer: Layer.Layer<
    Imports,
    never,
    ImportRepo | ContactRepo | LocationRepo | FleetRepo | ExpenseRepo | Ids | Transactor | Outbox
  > = Layer.effect(
    Imports,
    Effect.gen(function*() {
      const repo = yield* ImportRepo
      const targets = yield* importTargets
      const ids = yield* Ids
      const tx = yield* Transactor
      const find = (tenant: Tenant, id: string) => findOr404("import job", id, (id) => repo.findJob(tenant, id))
      const get = (tenant: Tenant, id: string) => Effect.flatMap(find(tenant, id), (job) => settle(tenant, job))
      /** The tenant's records these rows match, by match key (rows without a key match none). */
      const existingFor = <A extends TargetRecord>(
        tenant: Tenant,
        entity: ImportEntity,
        target: ImportTarget<A>,
        rows: ReadonlyArray<StagedRow>
      ) =>
        Effect.map(target.find(tenant, rows.flatMap((r) => r.key === null ? [] : [r.key])), (found) => {
          const existing = new Map<string, A>()
          for (const r of found) {
            const key = matchKey(entity, r)
            if (key !== null) existing.set(key, r)
          }
          return existing
        })
      const noProgress: OnProgress = () => Effect.void

      /** Stores the job with `updated_at` now: the heartbeat a parse keeps up (see `settle`). */
      const save = (tenant: Tenant, job: ImportJob) =>
        Effect.gen(function*() {
          const saved: ImportJob = { ...job, updated_at: yield* nowIso }
          yield* repo.updateJob(tenant, saved)
          return saved
        })

      /**
       * A job still `parsing` with no progress for PARSE_LEASE_MS lost the
       * process reading its file (killed, crashed, restarted): it is marked
       * `failed` (code `interrupted`) when next read, so it never stays
       * `parsing` forever. Decided: docs/decisions.md, "Imports".
       */
      const settle = (tenant: Tenant, job: ImportJob) =>
        Effect.gen(function*() {
          if (job.status !== "parsing") return job
          const now = yield* Clock.currentTimeMillis
          if (now - Date.parse(job.updated_at) <= PARSE_LEASE_MS) return job
          return yield* fail(tenant, job, new ImportFileError({
            code: "interrupted",
            message: `Reading the file stopped: the job made no progress for ${PARSE_LEASE_MS / 60_000} minutes ` +
              `(the process reading it ended). Upload the file again.`
          }))
        })

      const fail = (tenant: Tenant, job: ImportJob, error: ImportFileError) =>
        Effect.gen(function*() {
          const failed: ImportJob = {
            ...job,
            status: "failed",
            failure: { code: error.code, message: error.message },
            finished_at: yield* nowIso
          }
          return yield* save(tenant, failed)
        })

      const parse = (tenant: Tenant, initial: ImportJob, file: CsvFile, mapping: Readonly<Record<string, string>>, onProgress: OnProgress) =>
        Effect.gen(function*() {
          const spec = entitySpecs[initial.entity]
          let job: ImportJob = { ...initial, encoding: file.encoding, delimiter: file.delimiter }
          let header: ReadonlyArray<string> | undefined
          let columns: ReturnType<typeof resolveColumns> | undefined
          let rows = 0
          let issueSeq = 0
          const seen = new Map<string, number>()
          const preview = {
            news: 0, updates: 0, skips: 0, errors: 0,
            samples: { news: [] as Array<ImportSample>, updates: [] as Array<ImportSample>, skips: [] as Array<ImportSample>, errors: [] as Array<ImportIssue> }
          }
          const erroredRows = new Set<number>()

          const handleBatch = (batch: ReadonlyArray<CsvRecord>) =>
            Effect.gen(function*() {
              const issues: Array<ImportIssue> = []
              const valid: Array<StagedRow> = []
              for (const record of batch) {
                if (header === undefined) {
                  const long = record.fields.findIndex((cell) => exceedsCharacters(cell, MAX_HEADER_CHARS))
                  if (long >= 0) {
                    // The cell itself is never repeated: it may be anything up to a whole record.
                    return yield* new ImportFileError({
                      code: "header_too_long",
                      message: `Column ${long + 1} of the first line is longer than ${MAX_HEADER_CHARS} characters, ` +
                        `so the first line is not a header row: the file must start with its column names`
                    })
                  }
                  header = record.fields
                  columns = resolveColumns(job.entity, job.preset, header, mapping)
                  if (!columns.ok) return yield* new ImportFileError({ code: columns.code, message: columns.message })
                  job = { ...job, columns: columns.columns.names }
                  continue
                }
                if (columns === undefined || !columns.ok) continue
                rows++
                if (rows > MAX_IMPORT_ROWS) {
                  return yield* new ImportFileError({ code: "too_many_rows", message: `The file has more than ${MAX_IMPORT_ROWS} rows` })
                }
                const raw = rowTexts(columns.columns, header.length, record.fields)
                if (typeof raw === "string") {
                  issues.push({ row: rows, column: null, message: `Row ${rows} (line ${record.line}) ${raw}` })
                  continue
                }
                if (allEmpty(raw)) {
                  issues.push({ row: rows, column: null, message: "is empty" })
                  continue
                }
                const converted = spec.convert(raw)
                if (converted.issues.length > 0) {
                  for (const i of converted.issues) issues.push({ row: rows, column: i.column, message: i.message })
                  continue
                }
                if (converted.key !== null) {
                  const first = seen.get(converted.key)
                  if (first !== undefined) {
                    issues.push({ row: rows, column: spec.keyField, message: `repeats the ${spec.keyField} of row ${first}` })
                    continue
                  }
                  seen.set(converted.key, rows)
                }
                valid.push({ row: rows, key: converted.key, fields: converted.fields })
              }
              // The batch's statements run while the next batches are read and checked; its preview is counted in file order.
              const firstIssue = issueSeq
              issueSeq += issues.length
              inFlight.push({ fiber: yield* Effect.forkChild(write(valid, issues, firstIssue)), valid, issues, rows })
              while (inFlight.length > IN_FLIGHT) yield* settleOldest
            })

          /** Matches a batch's valid rows against the records that exist, and stages them and its errors: independent statements, at once. */
          const write = (valid: ReadonlyArray<StagedRow>, issues: ReadonlyArray<ImportIssue>, firstIssue: number) =>
            Effect.map(
              Effect.all([
                targets.use<Effect.Effect<ReadonlyMap<string, TargetRecord>>>(job.entity, (target) => existingFor(tenant, job.entity, target, valid)),
                repo.stageRows(tenant, job.id, valid),
                repo.addIssues(tenant, job.id, firstIssue, issues)
              ], { concurrency: "unbounded" }),
              ([found]) => found
            )

          /** Waits for the oldest batch's statements, counts it into the preview, and reports progress. */
          const settleOldest = Effect.gen(function*() {
            const { fiber, issues, rows: rowsSoFar, valid } = inFlight.shift()!
            const existing = yield* Fiber.join(fiber)
            for (const row of valid) {
              const current = row.key === null ? undefined : existing.get(row.key)
              const kind = current === undefined ? "news" : changedFields(current, row.fields).length === 0 ? "skips" : "updates"
              preview[kind]++
              if (preview.samples[kind].length < SAMPLE_SIZE) preview.samples[kind].push(sample(row))
            }
            for (const i of issues) {
              if (i.row !== null) erroredRows.add(i.row)
              if (preview.samples.errors.length < SAMPLE_SIZE) preview.samples.errors.push(withHeader(job, i))
            }
            preview.errors = erroredRows.size
            const sinceSaved = (yield* Clock.currentTimeMillis) - Date.parse(job.updated_at)
            // Only a parse that stalled past half the lease can have been marked failed meanwhile; it stays failed.
            if (sinceSaved > PARSE_LEASE_MS / 2) {
              const stored = yield* repo.findJob(tenant, job.id)
              if (stored._tag === "Some" && stored.value.status !== "parsing") {
                return yield* new ImportFileError({ code: "interrupted", message: stored.value.failure?.message ?? "The job was stopped" })
              }
            }
            // Others read the progress from the job: it is written at most every PROGRESS_SAVE_MS.
            if (sinceSaved >= PROGRESS_SAVE_MS) job = yield* save(tenant, { ...job, processed_rows: rowsSoFar })
            yield* onProgress(rowsSoFar)
          })

          const inFlight: Array<{
            readonly fiber: Fiber.Fiber<ReadonlyMap<string, TargetRecord>>
            readonly valid: ReadonlyArray<StagedRow>
            readonly issues: ReadonlyArray<ImportIssue>
            readonly rows: number
          }> = []
          yield* file.records.pipe(
            Stream.rechunk(BATCH),
            Stream.runForEachArray((chunk) => handleBatch(chunk))
          )
          while (inFlight.length > 0) yield* settleOldest
          if (header === undefined) {
            return yield* new ImportFileError({ code: "empty_file", message: "The file is empty: it has no header row" })
          }
          if (rows === 0) {
            return yield* new ImportFileError({ code: "no_rows", message: "The file has a header but no data rows" })
          }
          const ready: ImportJob = {
            ...job,
            status: "ready",
            total_rows: rows,
            processed_rows: rows,
            error_count: preview.errors,
            preview: { ...preview, samples: { ...preview.samples } },
            finished_at: yield* nowIso
          }
          return yield* save(tenant, ready)
        })

      /**
       * Writes the job's staged rows, a batch at a time, through the target: each row re-matched against the
       * records as they are now, created, updated or skipped; every change recorded with what it replaced.
       */
      const applyRows = <A extends TargetRecord>(tenant: Tenant, job: ImportJob, target: ImportTarget<A>, now: string, progress: OnProgress) =>
        Effect.gen(function*() {
          let after = 0
          let created = 0
          let updated = 0
          let skipped = 0
          while (true) {
            const rows = yield* repo.stagedRows(tenant, job.id, after)
            if (rows.length === 0) break
            after = rows[rows.length - 1]!.row
            const existing = yield* existingFor(tenant, job.entity, target, rows)
            const creates: Array<A> = []
            const changes: Array<ImportChange> = []
            for (const row of rows) {
              const current = row.key === null ? undefined : existing.get(row.key)
              if (current === undefined) {
                const record = yield* target.create(row.fields, yield* ids.uuid, now)
                creates.push(record)
                changes.push({ target_id: record.id, action: "created", before: null, written_updated_at: now })
                continue
              }
              const changed = changedFields(current, row.fields)
              if (changed.length === 0) {
                skipped++
                continue
              }
              const next = yield* target.merge(current, row.fields, now)
              yield* target.update(tenant, next)
              changes.push({ target_id: current.id, action: "updated", before: current, written_updated_at: now })
              updated++
              yield* target.updated(tenant, next, changed)
            }
            yield* target.insertAll(tenant, creates)
            yield* target.created(tenant, creates)
            created += creates.length
            yield* repo.recordChanges(tenant, job.id, changes)
            yield* progress(created + updated + skipped)
          }
          return { created, updated, skipped }
        })

      /**
       * Undoes what the job's apply recorded, or refuses (Conflict) when a record it wrote changed or went since,
       * or one it created is now in use: the created records removed, the updated ones restored.
       */
      const revertChanges = <A extends TargetRecord>(tenant: Tenant, job: ImportJob, target: ImportTarget<A>) =>
        Effect.gen(function*() {
          const changes = yield* repo.changes(tenant, job.id)
          const current = new Map<string, A>()
          for (let i = 0; i < changes.length; i += BATCH) {
            const locked = yield* target.lockAll(tenant, changes.slice(i, i + BATCH).map((c) => c.target_id))
            for (const r of locked) current.set(r.id, r)
          }
          const changedSince = changes.filter((c) => current.get(c.target_id)?.updated_at !== c.written_updated_at)
          if (changedSince.length > 0) {
            const named = changedSince.slice(0, 5).map((c) => c.target_id).join(", ")
            return yield* new Conflict({
              reason: `${changedSince.length} record${changedSince.length === 1 ? "" : "s"} of ${job.entity} changed or went ` +
                `since the import was applied (${named}${changedSince.length > 5 ? ", …" : ""}); the revert would lose those changes`
            })
          }
          const createdIds = changes.filter((c) => c.action === "created").map((c) => c.target_id)
          for (let i = 0; i < createdIds.length; i += BATCH) {
            yield* target.removeAll(tenant, createdIds.slice(i, i + BATCH)).pipe(
              // A created record that other records now refer to (a contact on an invoice) stays, and so does everything else.
              Effect.mapError((e) =>
                new Conflict({
                  reason: `The revert would delete ${job.entity} this import created that are now in use: ${e.reason}. ` +
                    `Nothing was reverted.`
                })
              )
            )
          }
          for (const c of changes) {
            if (c.action === "updated" && c.before !== null) yield* target.update(tenant, yield* target.restore(c.before))
            if (c.action === "created") yield* target.removed(tenant, current.get(c.target_id)!)
          }
        })

      return Imports.of({
        create: Effect.fn("Imports.create")(function*(tenant, input, file, onProgress) {
          const preset = input.preset ?? "generic"
          if (preset !== "generic" && presets[preset].entity !== input.entity) {
            return yield* ValidationFailed.field("preset", `the ${preset} preset reads ${presets[preset].entity}, not ${input.entity}`)
          }
          if (input.filename !== undefined && exceedsCharacters(input.filename, MAX_FILENAME_CHARS)) {
            return yield* ValidationFailed.field("filename", `must be at most ${MAX_FILENAME_CHARS} characters`)
          }
          const now = yield* nowIso
          const job: ImportJob = {
            id: ImportJobId.make(yield* ids.uuid),
            entity: input.entity,
            preset,
            filename: input.filename ?? "upload.csv",
            source: input.source,
            status: "parsing",
            encoding: null,
            delimiter: null,
            mapping: { ...input.mapping },
            columns: {},
            total_rows: 0,
            processed_rows: 0,
            imported_count: 0,
            updated_count: 0,
            skipped_count: 0,
            error_count: 0,
            preview: emptyPreview,
            failure: null,
            applied_at: null,
            reverted_at: null,
            created_at: now,
            updated_at: now,
            finished_at: null
          }
          yield* repo.insertJob(tenant, job)
          return yield* Effect.flatMap(file, (opened) => parse(tenant, job, opened, input.mapping ?? {}, onProgress ?? noProgress)).pipe(
            Effect.catchTag("ImportFileError", (error) =>
              Effect.flatMap(repo.findJob(tenant, job.id), (stored) =>
                fail(tenant, stored._tag === "Some" ? stored.value : job, error)))
          )
        }),
        get,
        list: (tenant, page) =>
          Effect.flatMap(repo.listJobs(tenant, page), (result) =>
            Effect.map(Effect.forEach(result.items, (job) => settle(tenant, job)), (items) => ({ ...result, items }))),
        errors: (tenant, id) =>
          Effect.flatMap(get(tenant, id), (job) => Effect.map(repo.issues(tenant, job.id), (issues) => issues.map((i) => withHeader(job, i)))),
        apply: Effect.fn("Imports.apply")(function*(tenant, id, onProgress) {
          const progress = onProgress ?? noProgress
          const before = yield* get(tenant, id)
          if (before.status !== "ready" && before.status !== "running") {
            return yield* new InvalidTransition({ resource: "import job", from: before.status, to: "running" })
          }
          // Visible while the apply runs; a process killed mid-apply leaves the job running with nothing written, and it can be applied again.
          if (before.status === "ready") yield* save(tenant, { ...before, status: "running", processed_rows: 0 })
          const applied = tx.withTransaction(Effect.gen(function*() {
            const job = yield* findOr404("import job", id, (id) => repo.findJob(tenant, id, { forUpdate: true }))
            if (job.status !== "ready" && job.status !== "running") {
              return yield* new InvalidTransition({ resource: "import job", from: job.status, to: "running" })
            }
            const now = yield* nowIso
            const { created, skipped, updated } = yield* targets.use(job.entity, (target) => applyRows(tenant, job, target, now, progress))
            yield* repo.dropStaged(tenant, job.id)
            const done: ImportJob = {
              ...job,
              status: "completed",
              processed_rows: created + updated + skipped,
              imported_count: created,
              updated_count: updated,
              skipped_count: skipped,
              applied_at: now,
              finished_at: yield* nowIso
            }
            return yield* save(tenant, done)
          }))
          return yield* applied.pipe(
            // A refused or failed apply (rolled back) leaves the job as it was, ready to be applied again.
            Effect.onError(() =>
              Effect.flatMap(repo.findJob(tenant, id), (stored) =>
                stored._tag === "Some" && stored.value.status === "running"
                  ? save(tenant, { ...stored.value, status: "ready" })
                  : Effect.void)
            )
          )
        }),
        revert: Effect.fn("Imports.revert")(function*(tenant, id) {
          yield* get(tenant, id)
          return yield* tx.withTransaction(Effect.gen(function*() {
            const job = yield* findOr404("import job", id, (id) => repo.findJob(tenant, id, { forUpdate: true }))
            if (job.status !== "completed") {
              return yield* new InvalidTransition({ resource: "import job", from: job.status, to: "reverted" })
            }
            yield* targets.use(job.entity, (target) => revertChanges(tenant, job, target))
            const reverted: ImportJob = { ...job, status: "reverted", reverted_at: yield* nowIso }
            return yield* save(tenant, reverted)
          }))
        })
      })
    })
  )
}
