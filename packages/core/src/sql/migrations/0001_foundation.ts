import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** Tenancy, credentials, locations, expenses, the outbox and idempotency keys. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE organizations (
    id uuid PRIMARY KEY,
    name text NOT NULL,
    time_zone text NOT NULL DEFAULT 'UTC',
    escalation_delay_days integer NOT NULL DEFAULT 7,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE TABLE users (
    id uuid PRIMARY KEY,
    email text NOT NULL CONSTRAINT users_email_key UNIQUE,
    name text NOT NULL,
    password_hash text,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE TABLE memberships (
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role text NOT NULL,
    joined_at timestamptz NOT NULL,
    PRIMARY KEY (organization_id, user_id)
  )`
  yield* sql`CREATE INDEX memberships_user ON memberships (user_id)`
  yield* sql`CREATE TABLE devices (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    name text NOT NULL,
    pin_hash text,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE TABLE credentials (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    kind text NOT NULL CHECK (kind IN ('api_key', 'personal', 'device', 'oauth')),
    name text,
    token_hash text NOT NULL CONSTRAINT credentials_token_hash_key UNIQUE,
    token_prefix text NOT NULL,
    scopes text NOT NULL,
    user_id uuid REFERENCES users(id),
    device_id uuid REFERENCES devices(id),
    app_id uuid,
    grant_id uuid,
    created_at timestamptz NOT NULL,
    last_used_at timestamptz,
    expires_at timestamptz,
    revoked_at timestamptz
  )`
  yield* sql`CREATE INDEX credentials_tenant ON credentials (organization_id, environment, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX credentials_grant ON credentials (grant_id) WHERE grant_id IS NOT NULL`
  yield* sql`CREATE TABLE locations (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    name text NOT NULL,
    code text,
    vertical_type text NOT NULL,
    is_primary boolean NOT NULL DEFAULT FALSE,
    address text,
    latitude double precision,
    longitude double precision,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX locations_tenant ON locations (organization_id, environment, created_at DESC, id DESC)`
  // At most one primary location per organization environment, whatever the application does.
  yield* sql`CREATE UNIQUE INDEX locations_one_primary ON locations (organization_id, environment) WHERE is_primary`
  yield* sql`CREATE UNIQUE INDEX locations_code_unique ON locations (organization_id, environment, lower(code))
    WHERE code IS NOT NULL`
  yield* sql`CREATE TABLE expenses (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    description text NOT NULL,
    category text NOT NULL,
    status text NOT NULL,
    amount numeric(14, 2) NOT NULL CHECK (amount >= 0),
    currency char(3) NOT NULL,
    expense_date date NOT NULL,
    location_id uuid REFERENCES locations(id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX expenses_tenant ON expenses (organization_id, environment, created_at DESC, id DESC)`
  yield* sql`CREATE TABLE outbox_events (
    id uuid PRIMARY KEY,
    event_id text NOT NULL,
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    type text NOT NULL,
    data jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    processed_at timestamptz,
    CONSTRAINT outbox_events_event_key UNIQUE (organization_id, environment, event_id)
  )`
  yield* sql`CREATE INDEX outbox_events_unprocessed ON outbox_events (created_at, id) WHERE processed_at IS NULL`
  yield* sql`CREATE TABLE idempotency_keys (
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL,
    credential_id uuid NOT NULL,
    key text NOT NULL,
    fingerprint text NOT NULL,
    status integer,
    headers jsonb,
    body text,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (organization_id, environment, credential_id, key)
  )`
})
