import { Context, Effect, Layer, type Option, Schema, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { Json, NullableTimestamp, Timestamp } from "../shared/columns.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie } from "../shared/sql.ts"
import { tenantTable } from "../shared/tables.ts"
import type { Tenant, TenantScoped } from "../shared/tenant.ts"
import { ImportColumns, ImportJob, type ImportIssue, ImportPreview } from "./model.ts"
import type { FieldValue, RowFields } from "./rules.ts"

/** A record of a target as an apply found it (the area's record; expenses with `external_ref`), as its changes keep it. */
export type TargetRecord = Readonly<Record<string, unknown>> & {
  readonly id: string
  readonly created_at: string
  readonly updated_at: string
}

/** A valid row kept between preview and apply. */
export interface StagedRow {
  readonly row: number
  readonly key: string | null
  readonly fields: RowFields
}

/** What an apply did to one record: created it, or updated it from `before`. */
export interface ImportChange {
  readonly target_id: string
  readonly action: "created" | "updated"
  readonly before: TargetRecord | null
  /** The record's `updated_at` as the apply wrote it: a different one at revert time means it changed since. */
  readonly written_updated_at: string
}

/** A list the caller checked is not empty. */
const nonEmpty = <A>(rows: Array<A>) => rows as unknown as readonly [A, ...Array<A>]

export const ImportJobRow = ImportJob.mapFields(Struct.assign({
  mapping: Json(ImportColumns),
  columns: Json(ImportColumns),
  preview: Json(ImportPreview),
  failure: Schema.NullOr(Json(Schema.Struct({ code: Schema.String, message: Schema.String }))),
  applied_at: NullableTimestamp,
  reverted_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
  finished_at: NullableTimestamp
}))

/**
 * A staged batch as text: its rows grouped by the fields they set, each group
 * `[field names, [[row, key, value…]…]]` — the names once per group, not once
 * a row, since the text is most of what the preview sends to the database.
 * Batches staged by migration 0016 are `[row, key, fields]` a row; both read.
 */
export const stagedText = (rows: ReadonlyArray<StagedRow>): string => {
  const groups = new Map<string, [Array<string>, Array<Array<FieldValue>>]>()
  for (const r of rows) {
    const names = Object.keys(r.fields)
    const signature = names.join("\u0000")
    let group = groups.get(signature)
    if (group === undefined) groups.set(signature, group = [names, []])
    const values: Array<FieldValue> = [r.row, r.key]
    for (const name of names) values.push(r.fields[name]!)
    group[1].push(values)
  }
  return JSON.stringify([...groups.values()])
}

export const fromStagedText = (text: string): Array<StagedRow> => {
  const rows: Array<StagedRow> = []
  for (const entry of JSON.parse(text) as Array<unknown>) {
    if (!Array.isArray(entry)) continue
    if (typeof entry[0] === "number") {
      rows.push({ row: entry[0], key: entry[1] as string | null, fields: entry[2] as RowFields })
      continue
    }
    const [names, values] = entry as [Array<string>, Array<Array<FieldValue>>]
    for (const v of values) {
      const fields: Record<string, FieldValue> = {}
      for (let i = 0; i < names.length; i++) fields[names[i]!] = v[i + 2]!
      rows.push({ row: v[0] as number, key: v[1] as string | null, fields })
    }
  }
  return rows.sort((a, b) => a.row - b.row)
}

/**
 * Storage port for import jobs: their errors, staged rows and changes belong
 * to a job, and every method reaches them through a job of the tenant. The
 * records an import writes are the areas' own, written through their
 * repositories (`targets.ts`).
 */
export class ImportRepo extends Context.Service<ImportRepo, TenantScoped<{
  readonly insertJob: (tenant: Tenant, job: ImportJob) => Effect.Effect<void>
  readonly updateJob: (tenant: Tenant, job: ImportJob) => Effect.Effect<void>
  readonly findJob: (tenant: Tenant, id: string, options?: { readonly forUpdate?: boolean }) => Effect.Effect<Option.Option<ImportJob>>
  readonly listJobs: (tenant: Tenant, page: PageRequest) => Effect.Effect<Page<ImportJob>>
  /**
   * Appends issues; `first` is the sequence number of the first (0-based, in
   * file order). An issue's `column` is stored as given: the service gives the
   * field's name, and shows the job's column for it when reading.
   */
  readonly addIssues: (tenant: Tenant, jobId: string, first: number, issues: ReadonlyArray<ImportIssue>) => Effect.Effect<void>
  readonly issues: (tenant: Tenant, jobId: string) => Effect.Effect<ReadonlyArray<ImportIssue>>
  /** Stages a batch of valid rows (in row order, after every batch staged before). */
  readonly stageRows: (tenant: Tenant, jobId: string, rows: ReadonlyArray<StagedRow>) => Effect.Effect<void>
  /** The first staged batch whose rows come after row number `after`, in order; empty when there is none. */
  readonly stagedRows: (tenant: Tenant, jobId: string, after: number) => Effect.Effect<ReadonlyArray<StagedRow>>
  /** Forgets the job's staged rows (an applied job never reads them again). */
  readonly dropStaged: (tenant: Tenant, jobId: string) => Effect.Effect<void>
  readonly recordChanges: (tenant: Tenant, jobId: string, changes: ReadonlyArray<ImportChange>) => Effect.Effect<void>
  readonly changes: (tenant: Tenant, jobId: string) => Effect.Effect<ReadonlyArray<ImportChange>>
}>>()("@opsplatform/core/imports/ImportRepo") {
  static readonly layerSql: Layer.Layer<ImportRepo, never, SqlClient.SqlClient> = Layer.effect(
    ImportRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const jobs = tenantTable(sql, { name: "import_jobs", row: ImportJobRow, fixed: ["created_at"] })
      const ofJob = (tenant: Tenant, jobId: string) =>
        sql`job_id = ${jobId} AND EXISTS (SELECT 1 FROM import_jobs j WHERE j.id = ${jobId}
          AND j.organization_id = ${tenant.organizationId} AND j.environment = ${tenant.environment})`
      const decodeChange = Schema.decodeUnknownEffect(Schema.Struct({
        target_id: Schema.String,
        action: Schema.Literals(["created", "updated"]),
        before: Schema.NullOr(Schema.Unknown),
        written_updated_at: Timestamp
      }))

      return ImportRepo.of({
        insertJob: (tenant, job) => orDie(jobs.insert(tenant, job)),
        updateJob: (tenant, job) => orDie(jobs.update(tenant, job)).pipe(Effect.asVoid),
        findJob: (tenant, id, options) => jobs.findById(tenant, id, options),
        listJobs: (tenant, page) => jobs.page(tenant, [], page),
        addIssues: (tenant, jobId, first, issues) =>
          issues.length === 0 ? Effect.void : orDie(sql`INSERT INTO import_errors ${
            sql.insert(nonEmpty(issues.map((i, n) => ({
              job_id: jobId,
              seq: first + n,
              row_number: i.row,
              field: i.column,
              message: i.message
            }))))
          }`).pipe(Effect.asVoid),
        issues: (tenant, jobId) =>
          orDie(sql<{ row_number: number | null; field: string | null; message: string }>`
            SELECT row_number, field, message FROM import_errors WHERE ${ofJob(tenant, jobId)} ORDER BY seq`).pipe(
            Effect.map((rows) => rows.map((r) => ({ row: r.row_number, column: r.field, message: r.message })))
          ),
        // The batch is one text value the server stores and never parses (see `stagedText`).
        stageRows: (_tenant, jobId, rows) =>
          rows.length === 0 ? Effect.void : orDie(sql`INSERT INTO import_row_batches (job_id, first_row, last_row, rows)
            VALUES (${jobId}, ${rows[0]!.row}, ${rows[rows.length - 1]!.row}, ${stagedText(rows)})`).pipe(Effect.asVoid),
        stagedRows: (tenant, jobId, after) =>
          orDie(sql<{ rows: string }>`SELECT rows FROM import_row_batches WHERE ${ofJob(tenant, jobId)} AND last_row > ${after}
            ORDER BY first_row LIMIT 1`).pipe(
            Effect.map((batches) => batches.length === 0 ? [] : fromStagedText(batches[0]!.rows).filter((r) => r.row > after))
          ),
        dropStaged: (tenant, jobId) => orDie(sql`DELETE FROM import_row_batches WHERE ${ofJob(tenant, jobId)}`).pipe(Effect.asVoid),
        recordChanges: (_tenant, jobId, changes) =>
          changes.length === 0 ? Effect.void : orDie(sql`INSERT INTO import_changes ${
            sql.insert(nonEmpty(changes.map((c) => ({
              job_id: jobId,
              target_id: c.target_id,
              action: c.action,
              before: c.before === null ? null : JSON.stringify(c.before),
              written_updated_at: c.written_updated_at
            }))))
          }`).pipe(Effect.asVoid),
        changes: (tenant, jobId) =>
          orDie(sql`SELECT target_id, action, before, written_updated_at FROM import_changes WHERE ${ofJob(tenant, jobId)}
            ORDER BY target_id`).pipe(
            Effect.flatMap((rows) => Effect.forEach(rows, (r) => Effect.orDie(decodeChange(r)))),
            Effect.map((rows) =>
              rows.map((r): ImportChange => ({
                ...r,
                before: (typeof r.before === "string" ? JSON.parse(r.before) : r.before) as TargetRecord | null
              }))
            )
          )
      })
    })
  )
}
