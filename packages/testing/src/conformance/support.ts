import { Effect } from "effect"
import { Ids } from "@opsplatform/core/shared/Ids"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { nowIso } from "@opsplatform/core/shared/time"
import { TenancyRepo } from "@opsplatform/core/tenancy/TenancyRepo"

/** A fresh organization straight through the port, so each test owns its rows. */
export const freshOrganization = Effect.gen(function*() {
  const repo = yield* TenancyRepo
  const ids = yield* Ids
  const id = yield* ids.uuid
  yield* repo.insertOrganization({
    id,
    name: `Conformance ${id.slice(-6)}`,
    time_zone: "UTC",
    escalation_delay_days: 7,
    created_at: yield* nowIso
  })
  const live: Tenant = { organizationId: id, environment: "live" }
  const sandbox: Tenant = { organizationId: id, environment: "sandbox" }
  return { id, live, sandbox }
})

/** Distinct, increasing timestamps for rows whose order a test checks. */
export const timestamps = (count: number, start = Date.UTC(2026, 0, 1)) =>
  Array.from({ length: count }, (_, i) => new Date(start + i * 1000).toISOString())
