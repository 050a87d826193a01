import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Cause, Console, Effect, Exit, Layer, Runtime } from "effect"
import { Command } from "effect/cli"
import { LoggingLive } from "../server/logging.ts"
import { opsplatform } from "./command.ts"

/** Anything else that stops a command: a JSON error on stderr, exit status 1, never on stdout. */
const reportFailure = (cause: Cause.Cause<unknown>) =>
  Cause.hasInterruptsOnly(cause)
    ? Effect.void
    : Effect.flatMap(
      Console.error(JSON.stringify({ error: { code: "failed", message: failureMessage(Cause.squash(cause)) } })),
      () => Effect.sync(() => {
        process.exitCode = 1
      })
    )

const failureMessage = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "object" && error !== null && "message" in error
    ? String((error as { message: unknown }).message)
    : String(error)

Command.run(opsplatform, { version: "0.1.0" }).pipe(
  Effect.catchCause(reportFailure),
  Effect.provide(Layer.mergeAll(NodeServices.layer, LoggingLive)),
  NodeRuntime.runMain({
    disableErrorReporting: true,
    // SIGTERM / SIGINT end `serve` and `worker` by interruption: a clean stop, exit status 0.
    teardown: (exit, onExit) =>
      Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)
  })
)
