import { Context, Effect, Layer } from "effect"
import { type Conflict, NotFound, ValidationFailed } from "../shared/errors.ts"
import { Ids, newId } from "../shared/Ids.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import type { Tenant } from "../shared/tenant.ts"
import { nowIso } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { LocationRepo } from "./LocationRepo.ts"
import { type Location, type LocationCreate, type LocationFilter, LocationId, type LocationUpdate } from "./model.ts"
import { isUuid } from "../shared/schemas.ts"
import { findOr404 } from "../shared/lookup.ts"

const checkCoordinates = (l: Location) =>
  (l.latitude === null) !== (l.longitude === null)
    ? Effect.fail(
      new ValidationFailed({
        details: [{ field: l.latitude === null ? "latitude" : "longitude", issue: "latitude and longitude go together" }]
      })
    )
    : Effect.void

/**
 * Locations of an organization environment. Making one primary demotes the
 * previous primary in the same transaction; the database still refuses two.
 */
export class Locations extends Context.Service<Locations, {
  readonly create: (tenant: Tenant, input: LocationCreate) => Effect.Effect<Location, ValidationFailed | Conflict>
  readonly get: (tenant: Tenant, id: string) => Effect.Effect<Location, NotFound>
  readonly list: (tenant: Tenant, filter: LocationFilter, page: PageRequest) => Effect.Effect<Page<Location>>
  readonly update: (tenant: Tenant, id: string, patch: LocationUpdate) => Effect.Effect<Location, NotFound | ValidationFailed | Conflict>
  readonly remove: (tenant: Tenant, id: string) => Effect.Effect<void, NotFound>
}>()("@opsplatform/core/locations/Locations") {
  static readonly layer: Layer.Layer<Locations, never, LocationRepo | Ids | Transactor> = Layer.effect(
    Locations,
    Effect.gen(function*() {
      const repo = yield* LocationRepo
      const ids = yield* Ids
      const tx = yield* Transactor

      const get = (tenant: Tenant, id: string) => findOr404("location", id, (id) => repo.find(tenant, id))

      return Locations.of({
        create: Effect.fn("Locations.create")(function*(tenant, input) {
          const now = yield* nowIso
          const location: Location = {
            id: yield* newId(ids, LocationId),
            name: input.name.trim(),
            code: input.code ?? null,
            vertical_type: input.vertical_type ?? "other",
            is_primary: input.is_primary ?? false,
            address: input.address ?? null,
            latitude: input.latitude ?? null,
            longitude: input.longitude ?? null,
            created_at: now,
            updated_at: now
          }
          yield* checkCoordinates(location)
          return yield* tx.withTransaction(Effect.gen(function*() {
            if (location.is_primary) yield* repo.clearPrimary(tenant, location.id, now)
            yield* repo.insert(tenant, location)
            return location
          }))
        }),
        get,
        list: (tenant, filter, page) => repo.list(tenant, filter, page),
        update: Effect.fn("Locations.update")(function*(tenant, id, patch) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            const current = yield* get(tenant, id)
            const now = yield* nowIso
            const next: Location = {
              ...current,
              ...patch,
              name: patch.name === undefined ? current.name : patch.name.trim(),
              updated_at: now
            }
            yield* checkCoordinates(next)
            // Even when it was primary when read: another may have been made primary since (decisions: "Limits and ranges").
            if (next.is_primary) yield* repo.clearPrimary(tenant, id, now)
            yield* repo.update(tenant, next)
            return next
          }))
        }),
        remove: Effect.fn("Locations.remove")(function*(tenant, id) {
          const removed = isUuid(id) && (yield* repo.remove(tenant, id))
          if (!removed) return yield* new NotFound({ resource: "location", id })
        })
      })
    })
  )
}
