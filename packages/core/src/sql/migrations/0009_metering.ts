import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Metered subscriptions and their usage records, with the forwarding outbox:
 * one `usage_forwarding` row per record, written in the same statement, and
 * one `usage_streams` row per environment, processor, customer and meter,
 * whose lease serializes calls to the processor (docs/decisions.md, "Usage
 * metering").
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const tenant = sql`organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox'))`

  yield* sql`CREATE TABLE subscriptions (
    id uuid PRIMARY KEY,
    ${tenant},
    contact_id uuid NOT NULL CONSTRAINT subscriptions_contact_id_fkey REFERENCES contacts(id),
    processor text NOT NULL CHECK (processor IN ('stripe')),
    processor_customer_id text NOT NULL CHECK (char_length(processor_customer_id) BETWEEN 5 AND 255),
    meter_event_name text NOT NULL CHECK (char_length(meter_event_name) BETWEEN 1 AND 100),
    status text NOT NULL CHECK (status IN ('active', 'paused', 'cancelled')),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX subscriptions_tenant ON subscriptions (organization_id, environment, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX subscriptions_contact ON subscriptions (contact_id)`

  yield* sql`CREATE TABLE usage_streams (
    id uuid PRIMARY KEY,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    processor text NOT NULL,
    processor_customer_id text NOT NULL,
    meter_event_name text NOT NULL,
    locked_until timestamptz,
    claim_token uuid,
    claimed_at timestamptz,
    CONSTRAINT usage_streams_key UNIQUE (environment, processor, processor_customer_id, meter_event_name)
  )`

  yield* sql`CREATE TABLE usage_records (
    id uuid PRIMARY KEY,
    ${tenant},
    subscription_id uuid NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
    identifier text NOT NULL CHECK (char_length(identifier) BETWEEN 1 AND 100),
    quantity bigint NOT NULL CHECK (quantity BETWEEN 1 AND 9007199254740991),
    timestamp timestamptz NOT NULL,
    processor text NOT NULL,
    processor_customer_id text NOT NULL,
    meter_event_name text NOT NULL,
    differing_retries integer NOT NULL DEFAULT 0,
    last_differing_retry_at timestamptz,
    created_at timestamptz NOT NULL,
    CONSTRAINT usage_records_identifier_unique UNIQUE (subscription_id, identifier)
  )`
  // Usage is listed per subscription, which belongs to one tenant: this is the list index, and the only other one
  // besides the unique key, so accepting a report writes as few index entries as it can.
  yield* sql`CREATE INDEX usage_records_subscription ON usage_records (subscription_id, created_at DESC, id DESC)`

  yield* sql`CREATE TABLE usage_forwarding (
    usage_id uuid PRIMARY KEY REFERENCES usage_records(id) ON DELETE CASCADE,
    stream_id uuid NOT NULL REFERENCES usage_streams(id),
    status text NOT NULL CHECK (status IN ('pending', 'sending', 'retrying', 'delivered', 'failed')),
    attempts integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    last_attempt_at timestamptz,
    last_error text,
    forwarded_at timestamptz,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX usage_forwarding_due ON usage_forwarding (stream_id, next_attempt_at)
    WHERE status IN ('pending', 'retrying', 'sending')`

  yield* sql`CREATE VIEW usage_record_view AS
    SELECT r.*, f.status AS forwarding_status, f.attempts, f.next_attempt_at, f.last_attempt_at, f.last_error,
      f.forwarded_at
    FROM usage_records r JOIN usage_forwarding f ON f.usage_id = r.id`
})
