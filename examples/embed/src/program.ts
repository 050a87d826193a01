/**
 * What the host does with the domain: core's services, over whichever storage
 * and infrastructure the caller provides (`core.ts`: memory; `postgres.ts`:
 * PostgreSQL).
 */
import { Effect } from "effect"
import { Expenses, Locations, Pagination, Tenancy } from "@opsplatform/core"

export const useCore = Effect.gen(function*() {
  const tenancy = yield* Tenancy.Tenancy
  const locations = yield* Locations.Locations
  const expenses = yield* Expenses.Expenses

  const org = yield* tenancy.createOrganization({ name: "Acme Logistics", time_zone: "Europe/Bucharest" })
  const tenant = { organizationId: org.id, environment: "live" as const }

  const depot = yield* locations.create(tenant, { name: "Main depot", code: "DEPOT", is_primary: true, vertical_type: "warehouse" })
  yield* expenses.create(tenant, {
    description: "Diesel, 60 l",
    category: "fuel",
    amount: "432.60",
    currency: "RON",
    expense_date: "2026-11-20",
    location_id: depot.id
  })
  const page = yield* expenses.list(tenant, { location_id: depot.id }, yield* Pagination.pageRequest({}))
  return { organization: org.name, depot: depot.name, expenses: page.items.map((e) => `${e.description}: ${e.amount} ${e.currency}`) }
})
