import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * An import stages its valid rows a batch to a row: the batch's rows as one
 * JSON text, written once when the preview reads them and read back in order
 * by the apply. A row per staged row cost the preview more than reading the
 * file (decided: docs/decisions.md, "Imports"). Rows staged before this change
 * move into batches of 1000, so a job previewed earlier can still be applied.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE import_row_batches (
    job_id uuid NOT NULL REFERENCES import_jobs(id) ON DELETE CASCADE,
    first_row integer NOT NULL,
    last_row integer NOT NULL,
    rows text NOT NULL,
    CONSTRAINT import_row_batches_pkey PRIMARY KEY (job_id, first_row),
    CONSTRAINT import_row_batches_order CHECK (first_row <= last_row)
  )`
  // Stored out of line without compression: compressing a batch cost the preview more than sending it.
  yield* sql`ALTER TABLE import_row_batches ALTER COLUMN rows SET STORAGE EXTERNAL`
  yield* sql`COMMENT ON COLUMN import_row_batches.rows IS
    'JSON array of [row_number, match_key, fields]: only the application reads it, so it is kept as text, never parsed by the server'`
  yield* sql`INSERT INTO import_row_batches (job_id, first_row, last_row, rows)
    SELECT job_id, min(row_number), max(row_number),
      json_agg(json_build_array(row_number, match_key, fields) ORDER BY row_number)::text
    FROM import_rows GROUP BY job_id, (row_number - 1) / 1000`
  yield* sql`DROP TABLE import_rows`
})
