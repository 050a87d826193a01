import { Context, Effect, Layer } from "effect"
import { event, freshEventId } from "../events/catalog.ts"
import { Outbox } from "../events/Outbox.ts"
import { changedKeys } from "../shared/changes.ts"
import { Conflict, type NotFound, ValidationFailed } from "../shared/errors.ts"
import { Ids, newId } from "../shared/Ids.ts"
import { findOr404 } from "../shared/lookup.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import type { Tenant } from "../shared/tenant.ts"
import { nowIso } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { FleetRepo } from "./FleetRepo.ts"
import {
  type FleetVehicle,
  type FleetVehicleCreate,
  type FleetVehicleFilter,
  type FleetVehicleUpdate,
  VehicleId
} from "./model.ts"
import { normalizePlate, plateIssue } from "./rules.ts"
import { VehicleUsage } from "./VehicleUsage.ts"

/** The vehicle as stored: its plate normalised, and no litres per 100 km for an electric one. */
const checked = (vehicle: FleetVehicle): Effect.Effect<FleetVehicle, ValidationFailed> => {
  const plate = normalizePlate(vehicle.plate)
  const issues = [
    ...(plate === undefined ? [{ field: "plate", issue: plateIssue }] : []),
    ...(vehicle.fuel_type === "electric" && vehicle.fuel_consumption_l_per_100km !== null
      ? [{ field: "fuel_consumption_l_per_100km", issue: "an electric vehicle burns no fuel; leave it null" }]
      : [])
  ]
  return issues.length > 0
    ? Effect.fail(new ValidationFailed({ details: issues }))
    : Effect.succeed({ ...vehicle, plate: plate!, make: vehicle.make?.trim() ?? null, model: vehicle.model?.trim() ?? null })
}

/** Fields no caller sets: `changed_fields` never names them. */
const bookkeeping: ReadonlyArray<keyof FleetVehicle> = ["id", "created_at", "updated_at"]

/**
 * The vehicle registry of an organization environment. Every change writes
 * its `fleet_vehicle.*` event to the outbox in the change's transaction; an
 * edit compares the stored values, so one that changes nothing writes
 * nothing and publishes nothing.
 */
export class Fleet extends Context.Service<Fleet, {
  readonly create: (tenant: Tenant, input: FleetVehicleCreate) => Effect.Effect<FleetVehicle, ValidationFailed | Conflict>
  readonly get: (tenant: Tenant, id: string) => Effect.Effect<FleetVehicle, NotFound>
  readonly list: (tenant: Tenant, filter: FleetVehicleFilter, page: PageRequest) => Effect.Effect<Page<FleetVehicle>>
  readonly update: (tenant: Tenant, id: string, patch: FleetVehicleUpdate) => Effect.Effect<FleetVehicle, NotFound | ValidationFailed | Conflict>
  /** Refused (Conflict) while a route that is not finished uses the vehicle. */
  readonly remove: (tenant: Tenant, id: string) => Effect.Effect<void, NotFound | Conflict>
}>()("@opsplatform/core/fleet/Fleet") {
  static readonly layer: Layer.Layer<Fleet, never, FleetRepo | VehicleUsage | Outbox | Ids | Transactor> = Layer.effect(
    Fleet,
    Effect.gen(function*() {
      const repo = yield* FleetRepo
      const usage = yield* VehicleUsage
      const outbox = yield* Outbox
      const ids = yield* Ids
      const tx = yield* Transactor

      const find = (tenant: Tenant, id: string, forUpdate = false) =>
        findOr404("fleet vehicle", id, (id) => repo.find(tenant, id, { forUpdate }))
      const eventId = Effect.map(ids.uuid, freshEventId)

      return Fleet.of({
        create: Effect.fn("Fleet.create")(function*(tenant, input) {
          const now = yield* nowIso
          const vehicle = yield* checked({
            id: yield* newId(ids, VehicleId),
            plate: input.plate,
            make: input.make ?? null,
            model: input.model ?? null,
            fuel_type: input.fuel_type,
            capacity_kg: input.capacity_kg ?? null,
            capacity_parcels: input.capacity_parcels ?? null,
            fuel_consumption_l_per_100km: input.fuel_consumption_l_per_100km ?? null,
            active: input.active ?? true,
            created_at: now,
            updated_at: now
          })
          return yield* tx.withTransaction(Effect.gen(function*() {
            yield* repo.insert(tenant, vehicle)
            yield* outbox.publish(tenant, event("fleet_vehicle.created", yield* eventId, { id: vehicle.id, plate: vehicle.plate }))
            return vehicle
          }))
        }),
        get: (tenant, id) => find(tenant, id),
        list: (tenant, filter, page) => repo.list(tenant, filter, page),
        update: Effect.fn("Fleet.update")(function*(tenant, id, patch) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            const current = yield* find(tenant, id, true)
            const next = yield* checked({ ...current, ...patch })
            const changed = changedKeys(current, next, bookkeeping)
            if (changed.length === 0) return current
            const written = { ...next, updated_at: yield* nowIso }
            yield* repo.update(tenant, written)
            yield* outbox.publish(
              tenant,
              event("fleet_vehicle.updated", yield* eventId, { id: written.id, plate: written.plate, changed_fields: changed })
            )
            return written
          }))
        }),
        remove: Effect.fn("Fleet.remove")(function*(tenant, id) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            const vehicle = yield* find(tenant, id, true)
            const holds = yield* usage.holds(tenant, vehicle.id)
            if (holds.length > 0) {
              const named = holds.slice(0, 5).map((h) => `${h.label} (${h.status})`).join(", ")
              return yield* new Conflict({
                reason: `Vehicle ${vehicle.plate} is on ${holds.length === 1 ? "a route" : `${holds.length} routes`} not finished: ` +
                  `${named}${holds.length > 5 ? ", …" : ""}; complete or cancel ${holds.length === 1 ? "it" : "them"}, or give ` +
                  `${holds.length === 1 ? "it" : "them"} another vehicle, first`
              })
            }
            yield* repo.remove(tenant, vehicle.id)
            yield* outbox.publish(tenant, event("fleet_vehicle.deleted", yield* eventId, { id: vehicle.id, plate: vehicle.plate }))
          }))
        })
      })
    })
  )
}
