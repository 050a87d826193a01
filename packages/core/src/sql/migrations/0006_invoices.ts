import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Contacts, invoices with their per-series numbering, payments, reversals,
 * refunds, credit notes and bank transactions. Amounts are integer minor
 * units (bigint); an invoice keeps its running balance (credited, paid) so
 * figures over many invoices are SQL aggregates.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const tenant = sql`organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox'))`

  yield* sql`CREATE TABLE contacts (
    id uuid PRIMARY KEY,
    ${tenant},
    name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    kind text NOT NULL CHECK (kind IN ('customer', 'supplier', 'both')),
    country text NOT NULL CHECK (country ~ '^[A-Z]{2}$'),
    vat_number text,
    registration_number text,
    address text,
    email text,
    phone text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT contacts_vat_number_unique UNIQUE (organization_id, environment, country, vat_number)
  )`
  yield* sql`CREATE INDEX contacts_tenant ON contacts (organization_id, environment, created_at DESC, id DESC)`

  yield* sql`CREATE TABLE invoice_series (
    ${tenant},
    series text NOT NULL,
    last_number integer NOT NULL,
    PRIMARY KEY (organization_id, environment, series)
  )`

  yield* sql`CREATE TABLE invoices (
    id uuid PRIMARY KEY,
    ${tenant},
    contact_id uuid NOT NULL CONSTRAINT invoices_contact_id_fkey REFERENCES contacts(id),
    status text NOT NULL CHECK (status IN ('DRAFT', 'SENT', 'PARTIALLY_PAID', 'PAID', 'CREDITED', 'VOID')),
    series text,
    number text,
    currency text NOT NULL,
    issue_date date,
    due_date date,
    exchange_rate_ron text,
    notes text,
    lines jsonb NOT NULL,
    subtotal_minor bigint NOT NULL,
    vat_minor bigint NOT NULL,
    total_minor bigint NOT NULL,
    credited_minor bigint NOT NULL DEFAULT 0 CHECK (credited_minor >= 0),
    paid_minor bigint NOT NULL DEFAULT 0 CHECK (paid_minor >= 0),
    issued_at timestamptz,
    voided_at timestamptz,
    paid_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT invoices_number_unique UNIQUE (organization_id, environment, number)
  )`
  yield* sql`CREATE INDEX invoices_tenant ON invoices (organization_id, environment, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX invoices_contact ON invoices (contact_id)`
  yield* sql`CREATE INDEX invoices_open ON invoices (organization_id, environment, due_date)
    WHERE status IN ('SENT', 'PARTIALLY_PAID')`

  yield* sql`CREATE TABLE invoice_payments (
    id uuid PRIMARY KEY,
    ${tenant},
    invoice_id uuid NOT NULL REFERENCES invoices(id) ON DELETE CASCADE,
    amount_minor bigint NOT NULL CHECK (amount_minor > 0),
    payment_date date NOT NULL,
    method text NOT NULL,
    reference text NOT NULL,
    source text NOT NULL,
    reversal_id uuid,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX invoice_payments_invoice ON invoice_payments (invoice_id, created_at, id)`

  yield* sql`CREATE TABLE invoice_payment_reversals (
    id uuid PRIMARY KEY,
    ${tenant},
    invoice_id uuid NOT NULL REFERENCES invoices(id) ON DELETE CASCADE,
    reverses_payment_id uuid NOT NULL REFERENCES invoice_payments(id) ON DELETE CASCADE
      CONSTRAINT invoice_payment_reversals_payment_unique UNIQUE,
    amount_minor bigint NOT NULL CHECK (amount_minor > 0),
    reason text,
    reversed_at timestamptz NOT NULL
  )`

  yield* sql`CREATE TABLE invoice_refunds (
    id uuid PRIMARY KEY,
    ${tenant},
    invoice_id uuid NOT NULL REFERENCES invoices(id) ON DELETE CASCADE,
    amount_minor bigint NOT NULL CHECK (amount_minor > 0),
    refund_date date NOT NULL,
    method text NOT NULL,
    reference text NOT NULL,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX invoice_refunds_invoice ON invoice_refunds (invoice_id, created_at, id)`

  yield* sql`CREATE TABLE credit_notes (
    id uuid PRIMARY KEY,
    ${tenant},
    invoice_id uuid NOT NULL REFERENCES invoices(id) ON DELETE CASCADE,
    number text NOT NULL,
    status text NOT NULL CHECK (status IN ('issued', 'cancelled')),
    currency text NOT NULL,
    reason text NOT NULL,
    lines jsonb,
    amount_minor bigint NOT NULL CHECK (amount_minor > 0),
    issued_at timestamptz NOT NULL,
    cancelled_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT credit_notes_number_unique UNIQUE (organization_id, environment, number)
  )`
  yield* sql`CREATE INDEX credit_notes_tenant ON credit_notes (organization_id, environment, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX credit_notes_invoice ON credit_notes (invoice_id)`

  yield* sql`CREATE TABLE bank_transactions (
    id uuid PRIMARY KEY,
    ${tenant},
    booking_date date NOT NULL,
    amount_minor bigint NOT NULL CHECK (amount_minor > 0),
    currency text NOT NULL,
    description text NOT NULL,
    reference text NOT NULL,
    counterparty_name text,
    counterparty_iban text,
    matched_invoice_id uuid REFERENCES invoices(id) ON DELETE SET NULL,
    matched_payment_id uuid REFERENCES invoice_payments(id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX bank_transactions_tenant ON bank_transactions (organization_id, environment, created_at DESC, id DESC)`
})
