import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** The audit log (docs/decisions.md, "Design: shared by the areas"): append-only, one table, read per organization environment. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE audit_events (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    action text NOT NULL,
    outcome text NOT NULL CHECK (outcome IN ('success', 'failure', 'denied')),
    actor_credential_id uuid,
    actor_organization_id uuid,
    resource_type text,
    resource_id text,
    device_id uuid,
    request_id text,
    details jsonb NOT NULL,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX audit_events_tenant ON audit_events (organization_id, environment, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX audit_events_device ON audit_events (organization_id, environment, device_id, created_at DESC)
    WHERE device_id IS NOT NULL`
})
