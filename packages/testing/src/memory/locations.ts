import { Effect, Layer, Option } from "effect"
import type { Expense } from "@opsplatform/core/expenses/model"
import { locationConflicts, LocationRepo } from "@opsplatform/core/locations/LocationRepo"
import { type Location, LocationFilter } from "@opsplatform/core/locations/model"
import { Conflict } from "@opsplatform/core/shared/errors"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { MemoryStore } from "./MemoryStore.ts"
import { filterPredicates, memoryTenantTable, sortedById } from "./rows.ts"

export const LocationRepoMemory: Layer.Layer<LocationRepo, never, MemoryStore> = Layer.effect(
  LocationRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const locations = memoryTenantTable<Location>(store, "locations")
    const expenses = memoryTenantTable<Expense>(store, "expenses")
    // The same guarantees as the unique indexes of the SQL schema.
    const check = (tenant: Tenant, l: Location) => {
      for (const other of locations.filter(tenant, (o) => o.id !== l.id)) {
        if (l.is_primary && other.is_primary) return Effect.fail(new Conflict({ reason: locationConflicts.locations_one_primary }))
        if (l.code !== null && other.code !== null && l.code.toLowerCase() === other.code.toLowerCase()) {
          return Effect.fail(new Conflict({ reason: locationConflicts.locations_code_unique }))
        }
      }
      return Effect.void
    }
    const insert = (tenant: Tenant, l: Location) => Effect.andThen(check(tenant, l), Effect.sync(() => locations.insert(tenant, l)))
    const remove = (tenant: Tenant, id: string) => {
      if (!locations.remove(tenant, id)) return false
      // ON DELETE SET NULL, as the expenses' foreign key.
      for (const e of expenses.filter(tenant, (e) => e.location_id === id)) expenses.update(tenant, { ...e, location_id: null })
      return true
    }
    return LocationRepo.of({
      insert,
      update: (tenant, l) => Effect.andThen(check(tenant, l), Effect.sync(() => void locations.update(tenant, l))),
      find: (tenant, id) => Effect.sync(() => locations.find(tenant, id)),
      list: (tenant, filter, page) =>
        Effect.sync(() => locations.page(tenant, filterPredicates(LocationFilter, filter), page)),
      remove: (tenant, id) => Effect.sync(() => remove(tenant, id)),
      clearPrimary: (tenant, exceptId, at) =>
        Effect.sync(() => {
          for (const l of locations.filter(tenant, (l) => l.is_primary && l.id !== exceptId)) {
            locations.update(tenant, { ...l, is_primary: false, updated_at: at })
          }
        }),
      insertAll: (tenant, list) => Effect.forEach(list, (l) => insert(tenant, l), { discard: true }),
      // Memory transactions run one at a time, so reading is already exclusive.
      lockAll: (tenant, ids) => Effect.sync(() => sortedById(ids.flatMap((id) => Option.toArray(locations.find(tenant, id))))),
      removeAll: (tenant, ids) => Effect.sync(() => ids.forEach((id) => remove(tenant, id))),
      findByCodes: (tenant, codes) =>
        Effect.sync(() => {
          const wanted = new Set(codes.map((c) => c.toLowerCase()))
          return locations.filter(tenant, (l) => l.code !== null && wanted.has(l.code.toLowerCase()))
        })
    })
  })
)
