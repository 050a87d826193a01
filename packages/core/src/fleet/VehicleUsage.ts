import { Context, type Effect } from "effect"
import type { Tenant } from "../shared/tenant.ts"

/** A piece of work that holds a vehicle: a route that is not finished. */
export interface VehicleHold {
  readonly kind: "delivery route"
  readonly id: string
  /** How people name it, e.g. `R-000042`. */
  readonly label: string
  readonly status: string
}

/**
 * What keeps a vehicle from being deleted. The registry knows no route: the
 * host installs the areas above it that use vehicles (core's layers install
 * the delivery routes' holds), as the outbox knows no delivery mechanism.
 * Asked inside the deleting transaction, with the vehicle locked.
 */
export class VehicleUsage extends Context.Service<VehicleUsage, {
  readonly holds: (tenant: Tenant, vehicleId: string) => Effect.Effect<ReadonlyArray<VehicleHold>>
}>()("@opsplatform/core/fleet/VehicleUsage") {}
