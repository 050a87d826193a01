import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * An app the operator has verified (decided: docs/decisions.md, "OAuth 2.0"):
 * only such an app's authorize requests that fail before the member has done
 * anything go back to its redirect URI; every other app's are shown on the
 * server's error page. Set by `opsplatform admin verify-app`, never through
 * the API.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE oauth_apps ADD COLUMN verified_at timestamptz`
})
