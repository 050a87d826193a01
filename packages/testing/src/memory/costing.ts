import { Effect, Layer } from "effect"
import { CostingSettingsRepo } from "@opsplatform/core/costing/CostingSettingsRepo"
import type { FleetCostProfile, RateCard, SenderAddress } from "@opsplatform/core/costing/model"
import { MemoryStore } from "./MemoryStore.ts"
import { memoryTenantSingleton } from "./rows.ts"

/** The in-memory twin of `CostingSettingsRepo.layerSql`. */
export const CostingSettingsRepoMemory: Layer.Layer<CostingSettingsRepo, never, MemoryStore> = Layer.effect(
  CostingSettingsRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    return CostingSettingsRepo.fromTables({
      profiles: memoryTenantSingleton<FleetCostProfile>(store, "fleet_cost_profiles"),
      cards: memoryTenantSingleton<RateCard>(store, "courier_rate_cards"),
      senders: memoryTenantSingleton<SenderAddress>(store, "sender_addresses")
    })
  })
)
