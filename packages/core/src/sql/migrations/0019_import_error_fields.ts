import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * An import error names the field it is about (`vat_number`) instead of
 * repeating the file's column header on every error row: the job holds the
 * header once (`import_jobs.columns`, field → header), and a header cell of
 * any length multiplied by every failing row grew the table without bound.
 * Rows written before are given the field back from their job's columns.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`UPDATE import_errors e SET column_name = c.key
    FROM import_jobs j, jsonb_each_text(j.columns) c
    WHERE j.id = e.job_id AND e.column_name = c.value`
  yield* sql`ALTER TABLE import_errors RENAME COLUMN column_name TO field`
})
