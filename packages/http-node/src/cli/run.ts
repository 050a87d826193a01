import { Cause, ConfigProvider, Console, Effect } from "effect"
import { Command } from "effect/cli"
import { opsplatform } from "./command.ts"
import { CliProcess, failCommand } from "./process.ts"

/** Anything else that stops a command: a JSON error on stderr, exit status 1, never on stdout. */
const reportFailure = (cause: Cause.Cause<unknown>) =>
  Cause.hasInterruptsOnly(cause)
    ? Effect.void
    : Effect.andThen(
      Console.error(JSON.stringify({ error: { code: "failed", message: failureMessage(Cause.squash(cause)) } })),
      failCommand
    )

const failureMessage = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "object" && error !== null && "message" in error
    ? String((error as { message: unknown }).message)
    : String(error)

/**
 * `opsplatform <args>`: the command those arguments name, run to its end. Its
 * process (environment, stdin, exit status) is the `CliProcess` in context,
 * its output the `Console`'s; the binary gives it the real ones.
 */
export const runOpsplatform = (args: ReadonlyArray<string>) =>
  Effect.flatMap(CliProcess, ({ env }) =>
    Command.runWith(opsplatform, { version: "0.1.0" })(args).pipe(
      Effect.catchCause(reportFailure),
      // Every setting the command reads comes from its process's environment (src/config/variables.ts).
      Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: env as Record<string, string> })))
    ))
