import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The daily fiscal status check: the contact's last status at the tax
 * authority (shown on the contact), the monitor's internal claim columns, and
 * the history of statuses each contact went through.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`ALTER TABLE contacts
    ADD COLUMN fiscal_status jsonb,
    ADD COLUMN fiscal_checked_at timestamptz,
    ADD COLUMN fiscal_check_date date,
    ADD COLUMN fiscal_claim uuid,
    ADD COLUMN fiscal_claimed_until timestamptz`
  // The contacts a check may concern: Romanian customers with a CUI.
  yield* sql`CREATE INDEX contacts_fiscal_candidates ON contacts (organization_id, fiscal_check_date)
    WHERE country = 'RO' AND vat_number IS NOT NULL AND kind <> 'supplier'`
  yield* sql`CREATE INDEX invoices_contact_open ON invoices (contact_id) WHERE status IN ('SENT', 'PARTIALLY_PAID')`

  yield* sql`CREATE TABLE contact_fiscal_snapshots (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    contact_id uuid NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
    checked_on date NOT NULL,
    status jsonb NOT NULL,
    baseline boolean NOT NULL,
    changes jsonb NOT NULL,
    event_id text,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX contact_fiscal_snapshots_tenant
    ON contact_fiscal_snapshots (organization_id, environment, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX contact_fiscal_snapshots_contact ON contact_fiscal_snapshots (contact_id, created_at DESC, id DESC)`
})
