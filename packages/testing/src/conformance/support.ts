import { Effect } from "effect"
import { type FleetVehicle, VehicleId } from "@opsplatform/core/fleet/model"
import { Ids } from "@opsplatform/core/shared/Ids"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { nowIso } from "@opsplatform/core/shared/time"
import { OrganizationId, UserId } from "@opsplatform/core/tenancy/model"
import { TenancyRepo } from "@opsplatform/core/tenancy/TenancyRepo"

/** A fresh organization straight through the port, so each test owns its rows. */
export const freshOrganization = Effect.gen(function*() {
  const repo = yield* TenancyRepo
  const ids = yield* Ids
  const id = OrganizationId.make(yield* ids.uuid)
  yield* repo.insertOrganization({
    id,
    name: `Conformance ${id.slice(-6)}`,
    time_zone: "UTC",
    escalation_delay_days: 7,
    vat_number: null,
    created_at: yield* nowIso
  })
  const live: Tenant = { organizationId: id, environment: "live" }
  const sandbox: Tenant = { organizationId: id, environment: "sandbox" }
  return { id, live, sandbox }
})

/** Distinct, increasing timestamps for rows whose order a test checks. */
export const timestamps = (count: number, start = Date.UTC(2026, 0, 1)) =>
  Array.from({ length: count }, (_, i) => new Date(start + i * 1000).toISOString())

/** A user who is a member of the organization as a driver, straight through the port. */
export const freshDriver = (organizationId: string) =>
  Effect.gen(function*() {
    const tenancy = yield* TenancyRepo
    const ids = yield* Ids
    const driver = { id: UserId.make(yield* ids.uuid), email: `driver-${yield* ids.uuid}@example.test`, name: "Driver", created_at: yield* nowIso }
    yield* Effect.orDie(tenancy.insertUser(driver, null))
    yield* tenancy.upsertMembership(organizationId, driver.id, "driver", driver.created_at)
    return driver.id
  })

/** A stored vehicle of the registry, for tests that write through the port. */
export const vehicleRecord = (id: string, plate: string, at: string, overrides: Partial<FleetVehicle> = {}): FleetVehicle => ({
  id: VehicleId.make(id),
  plate,
  make: "Ford",
  model: "Transit",
  fuel_type: "diesel",
  capacity_kg: 1250.5,
  capacity_parcels: 120,
  fuel_consumption_l_per_100km: 9.875,
  active: true,
  created_at: at,
  updated_at: at,
  ...overrides
})
