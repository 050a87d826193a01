import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Accountant access grants, and the organization's VAT number by which a
 * cabinet and its client find each other (one organization per number).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE organizations ADD COLUMN vat_number text`
  yield* sql`CREATE UNIQUE INDEX organizations_vat_number_key ON organizations (vat_number) WHERE vat_number IS NOT NULL`
  yield* sql`CREATE TABLE access_grants (
    id uuid PRIMARY KEY,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    cabinet_organization_id uuid REFERENCES organizations(id) ON DELETE CASCADE,
    client_organization_id uuid REFERENCES organizations(id) ON DELETE CASCADE,
    requested_by text NOT NULL CHECK (requested_by IN ('cabinet', 'client')),
    requested_vat_number text NOT NULL,
    status text NOT NULL CHECK (status IN ('pending', 'active', 'revoked')),
    scope text NOT NULL CHECK (scope IN ('read', 'bookkeeping')),
    created_at timestamptz NOT NULL,
    approved_at timestamptz,
    revoked_at timestamptz,
    CONSTRAINT access_grants_requester_known CHECK (
      CASE requested_by WHEN 'cabinet' THEN cabinet_organization_id IS NOT NULL ELSE client_organization_id IS NOT NULL END
    ),
    CONSTRAINT access_grants_two_organizations CHECK (cabinet_organization_id <> client_organization_id),
    CONSTRAINT access_grants_approved_has_both CHECK (
      approved_at IS NULL OR (cabinet_organization_id IS NOT NULL AND client_organization_id IS NOT NULL)
    ),
    CONSTRAINT access_grants_active_approved CHECK (status <> 'active' OR approved_at IS NOT NULL)
  )`
  // At most one pending or active grant between two organizations, whichever side asked.
  yield* sql`CREATE UNIQUE INDEX access_grants_open_pair ON access_grants (
    environment,
    LEAST(cabinet_organization_id, client_organization_id),
    GREATEST(cabinet_organization_id, client_organization_id)
  ) WHERE status IN ('pending', 'active') AND cabinet_organization_id IS NOT NULL AND client_organization_id IS NOT NULL`
  // At most one open request per VAT number from an organization, known to belong to anyone or not.
  yield* sql`CREATE UNIQUE INDEX access_grants_open_request ON access_grants (
    environment,
    (CASE requested_by WHEN 'cabinet' THEN cabinet_organization_id ELSE client_organization_id END),
    requested_vat_number
  ) WHERE status IN ('pending', 'active')`
  // Each side's list, newest first.
  yield* sql`CREATE INDEX access_grants_cabinet ON access_grants (cabinet_organization_id, environment, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX access_grants_client ON access_grants (client_organization_id, environment, created_at DESC, id DESC)`
})
