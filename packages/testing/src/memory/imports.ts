import { Effect, Layer, Option } from "effect"
import { contactConflicts } from "@opsplatform/core/contacts/ContactRepo"
import { fleetConflicts } from "@opsplatform/core/fleet/FleetRepo"
import { type ImportChange, importConflicts, ImportRepo, type StagedRow, type TargetRecord } from "@opsplatform/core/imports/ImportRepo"
import type { ImportEntity, ImportIssue, ImportJob } from "@opsplatform/core/imports/model"
import { matchKey } from "@opsplatform/core/imports/rules"
import { locationConflicts } from "@opsplatform/core/locations/LocationRepo"
import { Conflict } from "@opsplatform/core/shared/errors"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { MemoryStore } from "./MemoryStore.ts"
import { memoryTenantTable } from "./rows.ts"

/** The memory twin of the SQL ImportRepo: jobs and their rows, and the target tables the other memory repos keep. */
export const ImportRepoMemory: Layer.Layer<ImportRepo, never, MemoryStore> = Layer.effect(
  ImportRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const jobs = memoryTenantTable<ImportJob>(store, "import_jobs")
    const issues = store.table<ReadonlyArray<ImportIssue>>("import_errors")
    const staged = store.table<ReadonlyArray<ReadonlyArray<StagedRow>>>("import_row_batches")
    const changes = store.table<ReadonlyArray<ImportChange>>("import_changes")
    // Expenses keep their external reference beside the expense, as the SQL table's extra column.
    const externalRefs = store.table<string | null>("expense_external_refs")
    const targets = {
      contacts: memoryTenantTable<TargetRecord>(store, "contacts"),
      locations: memoryTenantTable<TargetRecord>(store, "locations"),
      fleet_vehicles: memoryTenantTable<TargetRecord>(store, "fleet_vehicles"),
      expenses: memoryTenantTable<TargetRecord>(store, "expenses")
    }
    const invoices = memoryTenantTable<{ readonly id: string; readonly created_at: string; readonly contact_id: string }>(store, "invoices")
    const subscriptions = memoryTenantTable<{ readonly id: string; readonly created_at: string; readonly contact_id: string }>(store, "subscriptions")
    const mine = (tenant: Tenant, jobId: string) => Option.isSome(jobs.find(tenant, jobId))
    const read = (entity: ImportEntity, r: TargetRecord): TargetRecord =>
      entity === "expenses" ? { ...r, external_ref: externalRefs.get(r.id) ?? null } : r
    const conflictOf: Record<ImportEntity, string> = {
      contacts: contactConflicts.contacts_vat_number_unique,
      locations: locationConflicts.locations_code_unique,
      fleet_vehicles: fleetConflicts.fleet_vehicles_plate_unique,
      expenses: importConflicts.expenses_external_ref_unique
    }
    // The unique indexes of the SQL schema: one record per key in a tenant, one primary location.
    const check = (tenant: Tenant, entity: ImportEntity, r: TargetRecord) => {
      const key = matchKey(entity, r)
      const others = targets[entity].filter(tenant, (o) => o.id !== r.id).map((o) => read(entity, o))
      if (key !== null && others.some((o) => matchKey(entity, o) === key)) return Effect.fail(new Conflict({ reason: conflictOf[entity] }))
      if (entity === "locations" && r.is_primary === true && others.some((o) => o.is_primary === true)) {
        return Effect.fail(new Conflict({ reason: locationConflicts.locations_one_primary }))
      }
      return Effect.void
    }
    const write = (tenant: Tenant, entity: ImportEntity, r: TargetRecord, insert: boolean) => {
      const { external_ref, ...rest } = r
      if (entity === "expenses") externalRefs.set(r.id, (external_ref as string | null | undefined) ?? null)
      const row = (entity === "expenses" ? rest : r) as TargetRecord
      if (insert) targets[entity].insert(tenant, row)
      else {
        const stored = Option.getOrUndefined(targets[entity].find(tenant, r.id))
        if (stored === undefined) return
        // The contacts' fiscal status stays as stored, as the SQL layer's fixed columns.
        targets[entity].update(tenant, entity === "contacts"
          ? { ...row, fiscal_status: stored.fiscal_status, fiscal_checked_at: stored.fiscal_checked_at }
          : row)
      }
    }
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
        Effect.sync(() => mine(tenant, jobId) ? [...(changes.get(jobId) ?? [])].sort((a, b) => a.target_id.localeCompare(b.target_id)) : []),
      findTargets: (tenant, entity, keys) =>
        Effect.sync(() => {
          const wanted = new Set(keys)
          return targets[entity].filter(tenant).map((r) => read(entity, r)).filter((r) => {
            const key = matchKey(entity, r)
            return key !== null && wanted.has(key)
          })
        }),
      lockTargets: (tenant, entity, ids) =>
        Effect.sync(() => ids.flatMap((id) => Option.toArray(targets[entity].find(tenant, id)).map((r) => read(entity, r)))),
      insertTargets: (tenant, entity, records) =>
        Effect.forEach(records, (r) => Effect.andThen(check(tenant, entity, r), Effect.sync(() => write(tenant, entity, r, true))), {
          discard: true
        }),
      updateTarget: (tenant, entity, record) =>
        Effect.andThen(check(tenant, entity, record), Effect.sync(() => write(tenant, entity, record, false))),
      deleteTargets: (tenant, entity, ids) => {
        // The foreign keys of the SQL schema: invoices and subscriptions keep their contact (nothing is deleted then).
        if (entity === "contacts") {
          const wanted = new Set(ids)
          if (invoices.filter(tenant, (i) => wanted.has(i.contact_id)).length > 0) {
            return Effect.fail(new Conflict({ reason: contactConflicts.invoices_contact_id_fkey }))
          }
          if (subscriptions.filter(tenant, (s) => wanted.has(s.contact_id)).length > 0) {
            return Effect.fail(new Conflict({ reason: importConflicts.subscriptions_contact_id_fkey }))
          }
        }
        return Effect.sync(() => {
          for (const id of ids) targets[entity].remove(tenant, id)
        })
      }
    })
  })
)
