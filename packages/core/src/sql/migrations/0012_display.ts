import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Wall displays: the devices table grows into the display area's resource
 * (location, locale, the PIN's failure count and lockout, soft deletion);
 * rate limits move from fixed-window counters to sliding logs; and the pulse
 * assistant's money figures get daily rollups kept by the database.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE devices
    ADD COLUMN location_id uuid REFERENCES locations(id) ON DELETE SET NULL,
    ADD COLUMN locale text NOT NULL DEFAULT 'ro' CONSTRAINT devices_locale_check CHECK (locale IN ('ro', 'en')),
    ADD COLUMN failed_pin_attempts integer NOT NULL DEFAULT 0 CONSTRAINT devices_failed_pin_attempts_check
      CHECK (failed_pin_attempts >= 0),
    ADD COLUMN unlock_disabled_at timestamptz,
    ADD COLUMN updated_at timestamptz,
    ADD COLUMN deleted_at timestamptz`
  yield* sql`UPDATE devices SET updated_at = created_at`
  yield* sql`ALTER TABLE devices ALTER COLUMN updated_at SET NOT NULL`
  yield* sql`CREATE INDEX devices_tenant ON devices (organization_id, environment, created_at DESC, id DESC)
    WHERE deleted_at IS NULL`
  yield* sql`CREATE INDEX credentials_device ON credentials (device_id) WHERE device_id IS NOT NULL`

  // One row per limited key: the times (epoch ms) of the requests it admitted that may still be
  // in a window, and when the row can be swept (its last window has passed).
  yield* sql`DROP TABLE rate_limit_counters`
  yield* sql`CREATE TABLE rate_limit_logs (
    key text PRIMARY KEY,
    hits bigint[] NOT NULL,
    expires_ms bigint NOT NULL
  )`
  yield* sql`CREATE INDEX rate_limit_logs_expires ON rate_limit_logs (expires_ms)`

  // The pulse's money figures, per day (docs/decisions.md, "Wall displays: the pulse's rollups").
  // Every change to an invoice, a payment or an expense appends its effect on each figure to
  // `pulse_deltas` in the change's own transaction (insert-only: writers never wait on each other);
  // the pulse job folds the deltas into `pulse_days`. A figure reads both in one statement, so it is
  // exact at every commit, and costs one row per day and currency rather than one per invoice.
  const rollup = sql`organization_id uuid NOT NULL,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    measure text NOT NULL,
    day date NOT NULL,
    currency text NOT NULL,
    rate text NOT NULL,
    minor bigint NOT NULL,
    count integer NOT NULL`
  yield* sql`CREATE TABLE pulse_days (${rollup},
    PRIMARY KEY (organization_id, environment, measure, day, currency, rate))`
  yield* sql`CREATE TABLE pulse_deltas (id bigserial PRIMARY KEY, ${rollup})`
  yield* sql`CREATE INDEX pulse_deltas_tenant ON pulse_deltas (organization_id, environment, measure, day)
    INCLUDE (currency, rate, minor, count)`

  // What one row contributes: (measure, day, minor units). The measures are those of
  // display/pulse/figures.ts; `rate` is the invoice's exchange_rate_ron, '' for none.
  yield* sql`CREATE FUNCTION pulse_invoice_parts(i invoices) RETURNS TABLE (measure text, day date, minor bigint)
    LANGUAGE sql STABLE AS $$
      SELECT p.measure, p.day, p.minor FROM (VALUES
        ('invoiced', i.issue_date, i.total_minor - i.credited_minor,
          i.status IN ('SENT', 'PARTIALLY_PAID', 'PAID', 'CREDITED')),
        ('open_by_due_date', i.due_date, GREATEST(0, i.total_minor - i.credited_minor - i.paid_minor),
          i.status IN ('SENT', 'PARTIALLY_PAID')),
        ('open_by_issue_date', i.issue_date, GREATEST(0, i.total_minor - i.credited_minor - i.paid_minor),
          i.status IN ('SENT', 'PARTIALLY_PAID'))
      ) AS p(measure, day, minor, included)
      WHERE p.included AND p.day IS NOT NULL
    $$`
  yield* sql`CREATE FUNCTION pulse_payment_parts(p invoice_payments) RETURNS TABLE (measure text, day date, minor bigint)
    LANGUAGE sql STABLE AS $$
      SELECT 'collected', p.payment_date, p.amount_minor WHERE p.id IS NOT NULL AND p.reversal_id IS NULL
    $$`
  yield* sql`CREATE FUNCTION pulse_expense_parts(e expenses) RETURNS TABLE (measure text, day date, minor bigint)
    LANGUAGE sql STABLE AS $$
      SELECT 'expenses', e.expense_date, (e.amount * 100)::bigint
      WHERE e.status IN ('submitted', 'approved', 'paid')
    $$`

  // The triggers append the new row's parts less the old row's; an update that moves no figure appends nothing.
  const deltas = (before: string, after: string) =>
    `INSERT INTO pulse_deltas (organization_id, environment, measure, day, currency, rate, minor, count)
      SELECT organization_id, environment, measure, day, currency, rate, SUM(minor), SUM(n)::integer
      FROM (${before} UNION ALL ${after}) AS d (organization_id, environment, measure, day, currency, rate, minor, n)
      GROUP BY 1, 2, 3, 4, 5, 6
      HAVING SUM(minor) <> 0 OR SUM(n) <> 0;`
  yield* sql.unsafe(`CREATE FUNCTION pulse_invoices_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      ${
    deltas(
      `SELECT OLD.organization_id, OLD.environment, p.measure, p.day, OLD.currency, COALESCE(OLD.exchange_rate_ron, ''),
        -p.minor, -1 FROM pulse_invoice_parts(OLD) p WHERE TG_OP <> 'INSERT'`,
      `SELECT NEW.organization_id, NEW.environment, p.measure, p.day, NEW.currency, COALESCE(NEW.exchange_rate_ron, ''),
        p.minor, 1 FROM pulse_invoice_parts(NEW) p WHERE TG_OP <> 'DELETE'`
    )
  }
      RETURN NULL;
    END $$`)
  // A payment counts in its invoice's currency, at its rate; with the invoice gone, so are its figures.
  yield* sql.unsafe(`CREATE FUNCTION pulse_payments_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      v_currency text;
      v_rate text;
    BEGIN
      SELECT i.currency, COALESCE(i.exchange_rate_ron, '') INTO v_currency, v_rate FROM invoices i
        WHERE i.id = CASE WHEN TG_OP = 'DELETE' THEN OLD.invoice_id ELSE NEW.invoice_id END;
      IF v_currency IS NULL THEN
        RETURN NULL;
      END IF;
      ${
    deltas(
      `SELECT OLD.organization_id, OLD.environment, p.measure, p.day, v_currency, v_rate, -p.minor, -1
        FROM pulse_payment_parts(OLD) p WHERE TG_OP <> 'INSERT'`,
      `SELECT NEW.organization_id, NEW.environment, p.measure, p.day, v_currency, v_rate, p.minor, 1
        FROM pulse_payment_parts(NEW) p WHERE TG_OP <> 'DELETE'`
    )
  }
      RETURN NULL;
    END $$`)
  yield* sql.unsafe(`CREATE FUNCTION pulse_expenses_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      ${
    deltas(
      `SELECT OLD.organization_id, OLD.environment, p.measure, p.day, OLD.currency, '', -p.minor, -1
        FROM pulse_expense_parts(OLD) p WHERE TG_OP <> 'INSERT'`,
      `SELECT NEW.organization_id, NEW.environment, p.measure, p.day, NEW.currency, '', p.minor, 1
        FROM pulse_expense_parts(NEW) p WHERE TG_OP <> 'DELETE'`
    )
  }
      RETURN NULL;
    END $$`)
  for (const table of ["invoices", "invoice_payments", "expenses"]) {
    const fn = table === "invoice_payments" ? "pulse_payments_changed" : `pulse_${table}_changed`
    yield* sql.unsafe(`CREATE TRIGGER pulse_${table} AFTER INSERT OR UPDATE OR DELETE ON ${table}
      FOR EACH ROW EXECUTE FUNCTION ${fn}()`)
  }

  // The rows that exist already, folded at once.
  yield* sql`INSERT INTO pulse_days (organization_id, environment, measure, day, currency, rate, minor, count)
    SELECT i.organization_id, i.environment, p.measure, p.day, i.currency, COALESCE(i.exchange_rate_ron, ''), SUM(p.minor), count(*)
      FROM invoices i, pulse_invoice_parts(i) p GROUP BY 1, 2, 3, 4, 5, 6
    UNION ALL
    SELECT t.organization_id, t.environment, p.measure, p.day, i.currency, COALESCE(i.exchange_rate_ron, ''), SUM(p.minor), count(*)
      FROM invoice_payments t JOIN invoices i ON i.id = t.invoice_id, pulse_payment_parts(t) p GROUP BY 1, 2, 3, 4, 5, 6
    UNION ALL
    SELECT e.organization_id, e.environment, p.measure, p.day, e.currency, '', SUM(p.minor), count(*)
      FROM expenses e, pulse_expense_parts(e) p GROUP BY 1, 2, 3, 4, 5, 6`
})
