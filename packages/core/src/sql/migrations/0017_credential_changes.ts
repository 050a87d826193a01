import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Every change to a credential that authentication reads — revoked, expired,
 * rescoped, deleted (by hand or by a cascade) — is announced on the channel
 * `opsplatform_credentials` with the credential's id, when its transaction
 * commits. Each server process listens and drops the credential from its
 * cache (decided: docs/decisions.md, "Credential cache"). `last_used_at`
 * alone is not a change; a truncation announces "*".
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE FUNCTION opsplatform_credential_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('opsplatform_credentials', '*');
      ELSE
        PERFORM pg_notify('opsplatform_credentials', OLD.id::text);
      END IF;
      RETURN NULL;
    END
  $$`
  yield* sql`CREATE TRIGGER credentials_changed AFTER UPDATE ON credentials FOR EACH ROW
    WHEN ((to_jsonb(OLD) - 'last_used_at') IS DISTINCT FROM (to_jsonb(NEW) - 'last_used_at'))
    EXECUTE FUNCTION opsplatform_credential_changed()`
  yield* sql`CREATE TRIGGER credentials_deleted AFTER DELETE ON credentials FOR EACH ROW
    EXECUTE FUNCTION opsplatform_credential_changed()`
  yield* sql`CREATE TRIGGER credentials_truncated AFTER TRUNCATE ON credentials FOR EACH STATEMENT
    EXECUTE FUNCTION opsplatform_credential_changed()`
})
