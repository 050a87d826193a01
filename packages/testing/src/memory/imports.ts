import { Effect, Layer, Option } from "effect"
import { type ImportChange, ImportRepo, type StagedRow } from "@opsplatform/core/imports/ImportRepo"
import type { ImportIssue, ImportJob } from "@opsplatform/core/imports/model"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { MemoryStore } from "./MemoryStore.ts"
import { memoryTenantTable } from "./rows.ts"

/** The memory twin of the SQL ImportRepo: jobs, their errors, staged rows and changes. */
export const ImportRepoMemory: Layer.Layer<ImportRepo, never, MemoryStore> = Layer.effect(
  ImportRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const jobs = memoryTenantTable<ImportJob>(store, "import_jobs")
    const issues = store.table<ReadonlyArray<ImportIssue>>("import_errors")
    const staged = store.table<ReadonlyArray<ReadonlyArray<StagedRow>>>("import_row_batches")
    const changes = store.table<ReadonlyArray<ImportChange>>("import_changes")
    const mine = (tenant: Tenant, jobId: string) => Option.isSome(jobs.find(tenant, jobId))
    return ImportRepo.of({
      insertJob: (tenant, job) => Effect.sync(() => jobs.insert(tenant, job)),
      updateJob: (tenant, job) => Effect.sync(() => void jobs.update(tenant, job)),
      findJob: (tenant, id) => Effect.sync(() => jobs.find(tenant, id)),
      listJobs: (tenant, page) => Effect.sync(() => jobs.page(tenant, [], page)),
      addIssues: (tenant, jobId, _first, list) =>
        Effect.sync(() => {
          if (mine(tenant, jobId)) issues.set(jobId, [...(issues.get(jobId) ?? []), ...list])
        }),
      issues: (tenant, jobId) => Effect.sync(() => mine(tenant, jobId) ? issues.get(jobId) ?? [] : []),
      stageRows: (tenant, jobId, rows) =>
        Effect.sync(() => {
          if (mine(tenant, jobId) && rows.length > 0) staged.set(jobId, [...(staged.get(jobId) ?? []), [...rows]])
        }),
      stagedRows: (tenant, jobId, after) =>
        Effect.sync(() => {
          const batch = mine(tenant, jobId) ? (staged.get(jobId) ?? []).find((b) => b[b.length - 1]!.row > after) : undefined
          return batch === undefined ? [] : batch.filter((r) => r.row > after)
        }),
      dropStaged: (tenant, jobId) =>
        Effect.sync(() => {
          if (mine(tenant, jobId)) staged.delete(jobId)
        }),
      recordChanges: (tenant, jobId, list) =>
        Effect.sync(() => {
          if (mine(tenant, jobId)) changes.set(jobId, [...(changes.get(jobId) ?? []), ...list])
        }),
      changes: (tenant, jobId) =>
        Effect.sync(() => mine(tenant, jobId) ? [...(changes.get(jobId) ?? [])].sort((a, b) => a.target_id.localeCompare(b.target_id)) : [])
    })
  })
)
