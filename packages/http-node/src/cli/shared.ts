import { Console, Effect, Option, type Redacted } from "effect"
import { Errors } from "@opsplatform/core"
import { databaseConfig, load } from "../config/Configuration.ts"
import { coreLive } from "../server/app.ts"
import type { DatabaseChoice } from "../server/database.ts"
import { MISSING_KEY_MESSAGE, resolveOperatorKey, WebhookConfigError } from "../server/webhooks.ts"
import { failCommand } from "./process.ts"

/** JSON on stdout: the CLI's only output channel for results. */
export const printJson = (value: unknown) => Console.log(JSON.stringify(value))

/** A domain failure ends the command with its code and message on stderr and exit status 1. */
const reportDomainErrors = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.catch(self, (e) =>
    Errors.isDomainError(e)
      ? Effect.flatMap(
        Console.error(JSON.stringify({
          error: { code: e.code, message: e.message, ...(e._tag === "ValidationFailed" ? { details: e.details } : {}) }
        })),
        () => failCommand
      )
      : Effect.fail(e))

/** The database the command's environment names (`DATABASE_URL`, else the embedded one in `OPSPLATFORM_DATA_DIR`). */
export const commandDatabase = load(databaseConfig)

/** Runs a command on core over the database the environment names, reporting domain failures. */
export const withCore = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.flatMap(load(databaseConfig), (database) => self.pipe(reportDomainErrors, Effect.provide(coreLive(database))))

/** Processes that send webhooks need the operator key: on PostgreSQL without it they refuse to start. */
export const requireOperatorKey = (database: DatabaseChoice, secretKey: Option.Option<Redacted.Redacted<string>>) =>
  Effect.try({
    try: () => {
      if (Option.isNone(resolveOperatorKey(database, secretKey))) throw new WebhookConfigError(MISSING_KEY_MESSAGE)
    },
    catch: (e) => e as Error
  })
