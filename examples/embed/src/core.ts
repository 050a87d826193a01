/**
 * Using the domain from a plain script: core's services on the in-memory
 * storage layers. Swap `MemoryCore()` for the SQL layers (or your own
 * implementations of the storage ports) and nothing else changes.
 */
import { Effect } from "effect"
import { Expenses, Locations, Pagination, Tenancy } from "@opsplatform/core"
import { MemoryCore } from "@opsplatform/testing"

export const program = Effect.gen(function*() {
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
}).pipe(Effect.provide(MemoryCore()))

if (import.meta.url === `file://${process.argv[1]}`) {
  Effect.runPromise(program).then((result) => console.log(JSON.stringify(result, null, 2)))
}
