import { Effect } from "effect"
import type { Credentials } from "../auth/Credentials.ts"
import { nowIso } from "../shared/time.ts"
import type { Transactor } from "../shared/Transactor.ts"
import type { OAuthGrantRepo } from "./OAuthGrantRepo.ts"

/**
 * Kills grants with everything they issued — the grant, its refresh chain and
 * its access tokens — in one transaction, so no token of a revoked grant
 * outlives the call.
 */
export const grantRevoker = (
  grants: OAuthGrantRepo["Service"],
  credentials: Credentials["Service"],
  tx: Transactor["Service"]
) =>
(ids: ReadonlyArray<string>): Effect.Effect<void> =>
  ids.length === 0 ? Effect.void : tx.withTransaction(Effect.gen(function*() {
    const at = yield* nowIso
    for (const id of ids) {
      yield* grants.revokeGrant(id, at)
      yield* credentials.revokeGrant(id)
    }
  }))
