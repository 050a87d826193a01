import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** Webhook subscriptions, their sealed signing secrets, deliveries and the attempt log. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // The exact body every delivery of the event sends (envelope with organizationId), fixed at publish
  // so a redelivery carries the same bytes.
  yield* sql`ALTER TABLE outbox_events ADD COLUMN payload text`
  yield* sql`CREATE TABLE webhook_subscriptions (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    url text NOT NULL,
    description text,
    event_types jsonb NOT NULL,
    enabled boolean NOT NULL DEFAULT TRUE,
    disabled_reason text CHECK (disabled_reason IN ('by_request', 'endpoint_gone')),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX webhook_subscriptions_tenant
    ON webhook_subscriptions (organization_id, environment, created_at DESC, id DESC)`
  yield* sql`CREATE TABLE webhook_secrets (
    id uuid PRIMARY KEY,
    subscription_id uuid NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
    sealed text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz
  )`
  yield* sql`CREATE INDEX webhook_secrets_subscription ON webhook_secrets (subscription_id, created_at DESC)`
  yield* sql`CREATE TABLE webhook_deliveries (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    subscription_id uuid NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
    outbox_event_id uuid NOT NULL REFERENCES outbox_events(id) ON DELETE CASCADE,
    event_id text NOT NULL,
    event_type text NOT NULL,
    status text NOT NULL CHECK (status IN ('pending', 'sending', 'succeeded', 'failed', 'dead')),
    attempts integer NOT NULL DEFAULT 0,
    attempt_count integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    locked_until timestamptz,
    claim_token uuid,
    last_attempt_at timestamptz,
    last_status_code integer,
    last_error text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT webhook_deliveries_once UNIQUE (subscription_id, outbox_event_id)
  )`
  yield* sql`CREATE INDEX webhook_deliveries_subscription
    ON webhook_deliveries (subscription_id, created_at DESC, id DESC)`
  // What workers claim: only deliveries that still have an attempt ahead, so the index stays small.
  yield* sql`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE status IN ('pending', 'failed', 'sending')`
  yield* sql`CREATE TABLE webhook_attempts (
    id uuid PRIMARY KEY,
    delivery_id uuid NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    number integer NOT NULL,
    created_at timestamptz NOT NULL,
    status_code integer,
    duration_ms integer NOT NULL,
    error text,
    response_body text,
    next_attempt_at timestamptz,
    CONSTRAINT webhook_attempts_number UNIQUE (delivery_id, number)
  )`
  yield* sql`CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, created_at DESC, id DESC)`
})
