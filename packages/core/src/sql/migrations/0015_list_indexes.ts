import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Indexes the list filters ask for at a million rows (decided:
 * docs/decisions.md, "Lists at a million rows"). Each list reads newest first
 * by (created_at, id); a filter on a column with few values (status) walks
 * that column's rows in the same order instead of the tenant's whole index,
 * and a date range reads its days before sorting.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX delivery_routes_status ON delivery_routes
    (organization_id, environment, status, created_at DESC, id DESC)`
  // A status within a date range (routes of one kind in a month) counts and reads only those rows.
  yield* sql`CREATE INDEX delivery_routes_status_date ON delivery_routes (organization_id, environment, status, route_date)`
  yield* sql`CREATE INDEX contract_obligations_status ON contract_obligations
    (organization_id, environment, status, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX contract_obligations_due ON contract_obligations (organization_id, environment, due_date)`
  yield* sql`CREATE INDEX invoices_status ON invoices (organization_id, environment, status, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX invoices_issue_date ON invoices (organization_id, environment, issue_date)`
  yield* sql`CREATE INDEX webhook_deliveries_status ON webhook_deliveries (subscription_id, status, created_at DESC, id DESC)`
})
