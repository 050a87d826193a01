import { Effect, Schema } from "effect"
import { ContactRepo } from "../contacts/ContactRepo.ts"
import { Contact } from "../contacts/model.ts"
import { event, freshEventId } from "../events/catalog.ts"
import { Outbox } from "../events/Outbox.ts"
import { ExpenseRepo } from "../expenses/ExpenseRepo.ts"
import { ReferencedExpense } from "../expenses/model.ts"
import { FleetRepo } from "../fleet/FleetRepo.ts"
import { FleetVehicle } from "../fleet/model.ts"
import { LocationRepo } from "../locations/LocationRepo.ts"
import { Location } from "../locations/model.ts"
import type { Conflict } from "../shared/errors.ts"
import { Ids } from "../shared/Ids.ts"
import type { BatchWrites, Tenant } from "../shared/tenant.ts"
import type { TargetRecord } from "./ImportRepo.ts"
import type { ImportEntity } from "./model.ts"
import type { FieldValue, RowFields } from "./rules.ts"

/**
 * One target of imports, reached through its area's own repository (its typed
 * insert and update, its unique keys and references) and its area's record
 * schema: what an apply matches, creates and updates, and a revert locks,
 * restores and removes, all in the caller's transaction.
 */
export interface ImportTarget<A extends TargetRecord> extends BatchWrites<A> {
  readonly update: (tenant: Tenant, record: A) => Effect.Effect<void, Conflict>
  /** The tenant's records whose match key (`matchKey`) is among `keys`. */
  readonly find: (tenant: Tenant, keys: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<A>>
  /** A new record: the area's defaults, then the row's fields, checked by the area's record schema. */
  readonly create: (fields: RowFields, id: string, now: string) => Effect.Effect<A>
  /** `current` with the row's fields written over it, checked by the area's record schema. */
  readonly merge: (current: A, fields: RowFields, now: string) => Effect.Effect<A>
  /** A record's prior state as an apply recorded it, checked by the area's record schema. */
  readonly restore: (before: TargetRecord) => Effect.Effect<A>
  /** What the area tells of its changes, in the same transaction (the vehicles' events). */
  readonly created: (tenant: Tenant, records: ReadonlyArray<A>) => Effect.Effect<void>
  readonly updated: (tenant: Tenant, record: A, changed: ReadonlyArray<string>) => Effect.Effect<void>
  readonly removed: (tenant: Tenant, record: A) => Effect.Effect<void>
}

/** Something done with a target of any record type. */
interface WithTarget<R> {
  <A extends TargetRecord>(target: ImportTarget<A>): R
}

/** The four targets: `use` hands the entity's to `f`, typed by its record. */
interface ImportTargets {
  readonly use: <R>(entity: ImportEntity, f: WithTarget<R>) => R
}

/** The repository methods a target writes through. */
type TargetPort<A> = BatchWrites<A> & { readonly update: (tenant: Tenant, record: A) => Effect.Effect<void, Conflict> }

const target = <A extends TargetRecord>(
  port: TargetPort<A>,
  options: {
    readonly record: Schema.Decoder<A>
    readonly defaults: Readonly<Record<string, FieldValue>>
    readonly find: ImportTarget<A>["find"]
    readonly created?: ImportTarget<A>["created"]
    readonly updated?: ImportTarget<A>["updated"]
    readonly removed?: ImportTarget<A>["removed"]
  }
): ImportTarget<A> => {
  // The rows were checked by the import's rules when staged; a record the area's schema refuses is a defect of those rules.
  const decode = Schema.decodeUnknownEffect(options.record)
  const checked = (value: unknown) => Effect.orDie(decode(value))
  return {
    insertAll: port.insertAll,
    lockAll: port.lockAll,
    removeAll: port.removeAll,
    update: port.update,
    find: options.find,
    create: (fields, id, now) => checked({ ...options.defaults, ...fields, id, created_at: now, updated_at: now }),
    merge: (current, fields, now) => checked({ ...current, ...fields, updated_at: now }),
    restore: checked,
    created: options.created ?? (() => Effect.void),
    updated: options.updated ?? (() => Effect.void),
    removed: options.removed ?? (() => Effect.void)
  }
}

/** The contacts' match key is `country:VAT number` (`matchKey`); a country code has no colon. */
const vatNumberOfKey = (key: string) => {
  const colon = key.indexOf(":")
  return { country: key.slice(0, colon), vat_number: key.slice(colon + 1) }
}

/**
 * The targets over the areas' repositories. Vehicles publish
 * `fleet_vehicle.created` / `updated` / `deleted` as the fleet service does;
 * the other areas publish nothing on writes, so their targets do not either.
 */
export const importTargets: Effect.Effect<ImportTargets, never, ContactRepo | LocationRepo | FleetRepo | ExpenseRepo | Outbox | Ids> =
  Effect.gen(function*() {
    const contactRepo = yield* ContactRepo
    const locationRepo = yield* LocationRepo
    const fleetRepo = yield* FleetRepo
    const expenseRepo = yield* ExpenseRepo
    const outbox = yield* Outbox
    const ids = yield* Ids
    const eventId = Effect.map(ids.uuid, freshEventId)
    const vehicleEvent = (tenant: Tenant, type: "fleet_vehicle.created" | "fleet_vehicle.deleted", v: FleetVehicle) =>
      Effect.flatMap(eventId, (id) => outbox.publish(tenant, event(type, id, { id: v.id, plate: v.plate })))

    const contacts = target(contactRepo, {
      record: Contact,
      defaults: {
        kind: "customer", country: "RO", vat_number: null, registration_number: null, address: null, email: null, phone: null,
        fiscal_status: null, fiscal_checked_at: null
      },
      find: (tenant, keys) => contactRepo.findByVatNumbers(tenant, keys.map(vatNumberOfKey))
    })
    const locations = target(locationRepo, {
      record: Location,
      defaults: { code: null, vertical_type: "other", is_primary: false, address: null, latitude: null, longitude: null },
      find: locationRepo.findByCodes
    })
    const vehicles = target(fleetRepo, {
      record: FleetVehicle,
      defaults: { make: null, model: null, capacity_kg: null, capacity_parcels: null, fuel_consumption_l_per_100km: null, active: true },
      find: fleetRepo.findByPlates,
      created: (tenant, records) => Effect.forEach(records, (v) => vehicleEvent(tenant, "fleet_vehicle.created", v), { discard: true }),
      updated: (tenant, v, changed) =>
        Effect.flatMap(eventId, (id) =>
          outbox.publish(tenant, event("fleet_vehicle.updated", id, { id: v.id, plate: v.plate, changed_fields: changed }))),
      removed: (tenant, v) => vehicleEvent(tenant, "fleet_vehicle.deleted", v)
    })
    const expenses = target(expenseRepo, {
      record: ReferencedExpense,
      defaults: { status: "draft", category: "other", currency: "RON", location_id: null, external_ref: null },
      find: expenseRepo.findByExternalRefs
    })
    return {
      use: (entity, f) => {
        switch (entity) {
          case "contacts":
            return f(contacts)
          case "locations":
            return f(locations)
          case "fleet_vehicles":
            return f(vehicles)
          case "expenses":
            return f(expenses)
        }
      }
    }
  })
