import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Webhook portal sessions (docs/decisions.md, "Webhook portal"): a one-time
 * link minted by the API for an organization environment, exchanged once for
 * a browser cookie. Only SHA-256 hashes of the link's token and of the cookie
 * are kept. Rows go an hour after they expire (the portal purges them).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE webhook_portal_sessions (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    link_hash text NOT NULL UNIQUE,
    cookie_hash text UNIQUE,
    read_only boolean NOT NULL,
    event_types jsonb,
    frame_ancestors jsonb NOT NULL,
    theme jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    exchanged_at timestamptz,
    revoked_at timestamptz,
    CONSTRAINT webhook_portal_sessions_exchanged CHECK ((cookie_hash IS NULL) = (exchanged_at IS NULL))
  )`
  yield* sql`CREATE INDEX webhook_portal_sessions_expiry ON webhook_portal_sessions (expires_at)`
})
