import { Effect, Layer } from "effect"
import { ContractRepo } from "@opsplatform/core/contracts/ContractRepo"
import type { Contract } from "@opsplatform/core/contracts/model"
import { MemoryStore } from "./MemoryStore.ts"
import { memoryTenantTable } from "./rows.ts"

export const ContractRepoMemory: Layer.Layer<ContractRepo, never, MemoryStore> = Layer.effect(
  ContractRepo,
  Effect.gen(function*() {
    const contracts = memoryTenantTable<Contract>(yield* MemoryStore, "contracts")
    return ContractRepo.of({
      insert: (tenant, c) => Effect.sync(() => contracts.insert(tenant, c)),
      update: (tenant, c) => Effect.sync(() => void contracts.update(tenant, c)),
      find: (tenant, id) => Effect.sync(() => contracts.find(tenant, id)),
      list: (tenant, page) => Effect.sync(() => contracts.page(tenant, [], page))
    })
  })
)
