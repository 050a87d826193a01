import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Import jobs: the job with its preview, every row error, the valid rows
 * staged between preview and apply, and what an apply changed (created ids and
 * the prior state of updated records) so a revert undoes exactly that.
 * Expenses gain the external reference imports match them by.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`CREATE TABLE import_jobs (
    id uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('live', 'sandbox')),
    entity text NOT NULL CHECK (entity IN ('contacts', 'expenses', 'locations', 'fleet_vehicles')),
    preset text NOT NULL,
    filename text NOT NULL,
    source text NOT NULL,
    status text NOT NULL CHECK (status IN ('parsing', 'ready', 'running', 'completed', 'failed', 'reverted')),
    encoding text,
    delimiter text,
    mapping jsonb NOT NULL,
    columns jsonb NOT NULL,
    total_rows integer NOT NULL DEFAULT 0,
    processed_rows integer NOT NULL DEFAULT 0,
    imported_count integer NOT NULL DEFAULT 0,
    updated_count integer NOT NULL DEFAULT 0,
    skipped_count integer NOT NULL DEFAULT 0,
    error_count integer NOT NULL DEFAULT 0,
    preview jsonb NOT NULL,
    failure jsonb,
    applied_at timestamptz,
    reverted_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    finished_at timestamptz
  )`
  yield* sql`CREATE INDEX import_jobs_tenant ON import_jobs (organization_id, environment, created_at DESC, id DESC)`

  yield* sql`CREATE TABLE import_errors (
    job_id uuid NOT NULL REFERENCES import_jobs(id) ON DELETE CASCADE,
    seq integer NOT NULL,
    row_number integer,
    column_name text,
    message text NOT NULL,
    CONSTRAINT import_errors_pkey PRIMARY KEY (job_id, seq)
  )`

  yield* sql`CREATE TABLE import_rows (
    job_id uuid NOT NULL REFERENCES import_jobs(id) ON DELETE CASCADE,
    row_number integer NOT NULL,
    match_key text,
    fields jsonb NOT NULL,
    CONSTRAINT import_rows_pkey PRIMARY KEY (job_id, row_number)
  )`

  yield* sql`CREATE TABLE import_changes (
    job_id uuid NOT NULL REFERENCES import_jobs(id) ON DELETE CASCADE,
    target_id uuid NOT NULL,
    action text NOT NULL CHECK (action IN ('created', 'updated')),
    before jsonb,
    written_updated_at timestamptz NOT NULL,
    CONSTRAINT import_changes_pkey PRIMARY KEY (job_id, target_id)
  )`

  yield* sql`ALTER TABLE expenses ADD COLUMN external_ref text`
  yield* sql`CREATE UNIQUE INDEX expenses_external_ref_unique ON expenses (organization_id, environment, external_ref)
    WHERE external_ref IS NOT NULL`
})
