import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option } from "effect"
import { CredentialCache } from "@opsplatform/core"
import type { DatabaseChoice } from "./database.ts"

/**
 * The credential cache of a server on PostgreSQL: it hears of every change
 * through LISTEN on the trigger's channel, which holds one connection of the
 * pool for the life of the process. An embedded database (one process, one
 * connection) reads credentials directly: nothing to cache across processes,
 * and no connection to spare. `OPSPLATFORM_CREDENTIAL_CACHE=off` turns it off.
 * Decided: docs/decisions.md, "Credential cache".
 */
export const credentialCache = (choice: DatabaseChoice) =>
  choice._tag !== "Postgres" || choice.credentialCache === false
    ? Layer.empty
    : CredentialCache.cachedCredentialRepo().pipe(
      Layer.provide(Layer.effect(
        CredentialCache.CredentialChanges,
        Effect.map(PgClient.PgClient, (pg) =>
          CredentialCache.CredentialChanges.of({
            subscribe: pg.listen(CredentialCache.CREDENTIAL_CHANNEL),
            inTransaction: Effect.map(Effect.serviceOption(pg.transactionService), Option.isSome)
          }))
      ))
    )
