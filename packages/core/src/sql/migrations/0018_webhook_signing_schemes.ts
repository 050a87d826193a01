import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Signing schemes (decided: docs/decisions.md, "Webhook signing schemes"): a
 * signing key is a `v1` secret or a `v1a` Ed25519 key pair, whose private key
 * is sealed in `sealed` like a secret and whose public key is kept in the
 * clear. Existing secrets are `v1`.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE webhook_secrets
    ADD COLUMN scheme text NOT NULL DEFAULT 'v1' CHECK (scheme IN ('v1', 'v1a')),
    ADD COLUMN public_key text,
    ADD CONSTRAINT webhook_secrets_public_key CHECK ((scheme = 'v1a') = (public_key IS NOT NULL))`
})
