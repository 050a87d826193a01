import { Effect, Layer } from "effect"
import { AuditRepo } from "@opsplatform/core/audit/AuditRepo"
import { type AuditEvent, AuditFilter } from "@opsplatform/core/audit/model"
import { MemoryStore } from "./MemoryStore.ts"
import { filterPredicates, memoryTenantTable } from "./rows.ts"

export const AuditRepoMemory: Layer.Layer<AuditRepo, never, MemoryStore> = Layer.effect(
  AuditRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const events = memoryTenantTable<AuditEvent>(store, "audit_events")
    return AuditRepo.of({
      append: (tenant, event) => Effect.sync(() => events.insert(tenant, event)),
      list: (tenant, f, page) =>
        Effect.sync(() => events.page(tenant, filterPredicates(AuditFilter, f), page))
    })
  })
)
