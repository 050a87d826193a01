import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * OAuth 2.0 apps: registrations, installations, grants with their codes and
 * rotating refresh tokens, and the consent page's browser sessions and pending
 * authorization requests. Every secret column holds a SHA-256 hash; access
 * tokens live in `credentials` (kind 'oauth').
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE oauth_apps (
    id uuid PRIMARY KEY,
    client_id text NOT NULL CONSTRAINT oauth_apps_client_id_key UNIQUE,
    organization_id uuid REFERENCES organizations(id) ON DELETE CASCADE,
    environment text CHECK (environment IN ('live', 'sandbox')),
    name text NOT NULL,
    type text NOT NULL CHECK (type IN ('public', 'confidential')),
    redirect_uris jsonb NOT NULL,
    scopes text NOT NULL,
    grant_types text NOT NULL,
    secret_hash text,
    secret_prefix text,
    secret_rotated_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CHECK ((organization_id IS NULL) = (environment IS NULL)),
    CHECK ((type = 'confidential') = (secret_hash IS NOT NULL))
  )`
  yield* sql`CREATE INDEX oauth_apps_owner ON oauth_apps (organization_id, environment, created_at DESC, id DESC)`
  yield* sql`CREATE TABLE oauth_installations (
    id uuid PRIMARY KEY,
    app_id uuid NOT NULL REFERENCES oauth_apps(id) ON DELETE CASCADE,
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    scopes text NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT oauth_installations_app_tenant_key UNIQUE (app_id, organization_id, environment)
  )`
  yield* sql`CREATE INDEX oauth_installations_tenant
    ON oauth_installations (organization_id, environment, created_at DESC, id DESC)`
  yield* sql`CREATE TABLE oauth_grants (
    id uuid PRIMARY KEY,
    app_id uuid NOT NULL REFERENCES oauth_apps(id) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('authorization_code', 'client_credentials')),
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    user_id uuid REFERENCES users(id) ON DELETE CASCADE,
    installation_id uuid,
    scopes text NOT NULL,
    created_at timestamptz NOT NULL,
    refresh_until timestamptz,
    revoked_at timestamptz
  )`
  yield* sql`CREATE INDEX oauth_grants_app_tenant ON oauth_grants (app_id, organization_id, environment)`
  yield* sql`CREATE TABLE oauth_codes (
    id uuid PRIMARY KEY,
    code_hash text NOT NULL CONSTRAINT oauth_codes_code_hash_key UNIQUE,
    app_id uuid NOT NULL REFERENCES oauth_apps(id) ON DELETE CASCADE,
    grant_id uuid NOT NULL,
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    redirect_uri text NOT NULL,
    code_challenge text NOT NULL,
    scopes text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz
  )`
  yield* sql`CREATE TABLE oauth_refresh_tokens (
    id uuid PRIMARY KEY,
    token_hash text NOT NULL CONSTRAINT oauth_refresh_tokens_token_hash_key UNIQUE,
    grant_id uuid NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
    app_id uuid NOT NULL REFERENCES oauth_apps(id) ON DELETE CASCADE,
    parent_id uuid REFERENCES oauth_refresh_tokens(id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz,
    revoked_at timestamptz
  )`
  yield* sql`CREATE INDEX oauth_refresh_tokens_grant ON oauth_refresh_tokens (grant_id)`
  yield* sql`CREATE TABLE oauth_browser_sessions (
    id uuid PRIMARY KEY,
    token_hash text NOT NULL CONSTRAINT oauth_browser_sessions_token_hash_key UNIQUE,
    user_id uuid REFERENCES users(id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
  )`
  yield* sql`CREATE TABLE oauth_pending_authorizations (
    id uuid PRIMARY KEY,
    handle_hash text NOT NULL CONSTRAINT oauth_pending_authorizations_handle_hash_key UNIQUE,
    session_id uuid NOT NULL REFERENCES oauth_browser_sessions(id) ON DELETE CASCADE,
    app_id uuid NOT NULL REFERENCES oauth_apps(id) ON DELETE CASCADE,
    redirect_uri text NOT NULL,
    scopes text NOT NULL,
    state text,
    code_challenge text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX oauth_codes_expiry ON oauth_codes (expires_at)`
  yield* sql`CREATE INDEX oauth_pending_authorizations_expiry ON oauth_pending_authorizations (expires_at)`
  yield* sql`CREATE INDEX oauth_browser_sessions_expiry ON oauth_browser_sessions (expires_at)`
})
