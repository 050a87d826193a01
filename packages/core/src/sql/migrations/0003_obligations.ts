import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** Contracts, their obligations, and the notifications the obligation monitor sends. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE contracts (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX contracts_tenant ON contracts (organization_id, environment, created_at DESC, id DESC)`
  yield* sql`CREATE TABLE contract_obligations (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    contract_id uuid NOT NULL REFERENCES contracts(id) ON DELETE CASCADE,
    title text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 255),
    type text NOT NULL CHECK (type IN ('payment', 'delivery', 'report', 'renewal_notice', 'custom')),
    due_date date NOT NULL,
    recurrence text NOT NULL CHECK (recurrence IN ('none', 'monthly', 'quarterly', 'yearly')),
    recurrence_anchor_day smallint NOT NULL CHECK (recurrence_anchor_day BETWEEN 1 AND 31),
    remind_days_before integer NOT NULL CHECK (remind_days_before BETWEEN 0 AND 365),
    status text NOT NULL CHECK (status IN ('pending', 'completed', 'cancelled')),
    obligor text NOT NULL CHECK (obligor IN ('us', 'counterparty')),
    assignee_user_id uuid REFERENCES users(id) ON DELETE SET NULL,
    clause_label text CHECK (char_length(clause_label) <= 80),
    clause_excerpt text,
    description text,
    evidence_document_id uuid,
    evidence_note text CHECK (char_length(evidence_note) <= 2000),
    completed_at timestamptz,
    cancelled_at timestamptz,
    reminder_sent_at timestamptz,
    overdue_notified_at timestamptz,
    escalated_at timestamptz,
    previous_obligation_id uuid REFERENCES contract_obligations(id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX contract_obligations_tenant
    ON contract_obligations (organization_id, environment, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX contract_obligations_contract ON contract_obligations (contract_id)`
  // The monitor only ever looks at pending obligations, by due date.
  yield* sql`CREATE INDEX contract_obligations_pending_due
    ON contract_obligations (organization_id, due_date) WHERE status = 'pending'`
  // A completed recurring obligation has at most one successor that is not cancelled, whatever the application does.
  yield* sql`CREATE UNIQUE INDEX contract_obligations_one_successor
    ON contract_obligations (previous_obligation_id) WHERE previous_obligation_id IS NOT NULL AND status <> 'cancelled'`
  yield* sql`CREATE TABLE notifications (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    kind text NOT NULL,
    subject_id uuid NOT NULL,
    recipient_user_id uuid,
    due_date date,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX notifications_subject ON notifications (subject_id, created_at, id)`
})
