import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Organization mailboxes (IMAP), their folders' sync state, and the messages
 * a sync stored: headers and size only, never a body.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE mailboxes (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    address text NOT NULL,
    aliases jsonb NOT NULL,
    owner_user_id uuid,
    imap_host text NOT NULL,
    imap_port integer NOT NULL CONSTRAINT mailboxes_port_range CHECK (imap_port BETWEEN 1 AND 65535),
    imap_tls text NOT NULL CONSTRAINT mailboxes_tls_mode CHECK (imap_tls IN ('implicit', 'starttls', 'none')),
    imap_username text NOT NULL,
    credential_kind text NOT NULL CONSTRAINT mailboxes_credential_kind CHECK (credential_kind IN ('password', 'access_token')),
    credential_sealed text NOT NULL,
    enabled boolean NOT NULL,
    last_synced_at timestamptz,
    last_error text,
    baselined_at timestamptz,
    failures integer NOT NULL DEFAULT 0,
    next_sync_at timestamptz,
    locked_until timestamptz,
    claim_token uuid,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE UNIQUE INDEX mailboxes_address_unique ON mailboxes (organization_id, environment, lower(address))`
  yield* sql`CREATE INDEX mailboxes_tenant ON mailboxes (organization_id, environment, created_at DESC, id DESC)`
  // What sync processes claim: enabled mailboxes by when they are due.
  yield* sql`CREATE INDEX mailboxes_due ON mailboxes (next_sync_at NULLS FIRST) WHERE enabled`
  yield* sql`CREATE TABLE mail_folders (
    mailbox_id uuid NOT NULL REFERENCES mailboxes(id) ON DELETE CASCADE,
    path text NOT NULL,
    uid_validity text NOT NULL,
    last_uid bigint NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (mailbox_id, path)
  )`
  yield* sql`CREATE TABLE mail_messages (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    mailbox_id uuid NOT NULL REFERENCES mailboxes(id) ON DELETE CASCADE,
    identity text NOT NULL,
    folder text NOT NULL,
    uid bigint NOT NULL,
    message_id text,
    from_address text NOT NULL,
    subject text NOT NULL,
    recipient text NOT NULL,
    received_at timestamptz NOT NULL,
    size_bytes bigint,
    has_attachments boolean NOT NULL,
    outcome text NOT NULL CONSTRAINT mail_messages_outcome CHECK (outcome IN
      ('emitted', 'history', 'excluded_folder', 'excluded_flag', 'own_message', 'too_old', 'personal_mailbox')),
    created_at timestamptz NOT NULL,
    CONSTRAINT mail_messages_once UNIQUE (mailbox_id, identity)
  )`
  yield* sql`CREATE INDEX mail_messages_tenant ON mail_messages (organization_id, environment, created_at DESC, id DESC)`
})
