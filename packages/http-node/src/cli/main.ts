import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Cause, Effect, Exit, Layer, Runtime } from "effect"
import { LoggingLive } from "../server/logging.ts"
import { runOpsplatform } from "./run.ts"

runOpsplatform(process.argv.slice(2)).pipe(
  Effect.provide(Layer.mergeAll(NodeServices.layer, LoggingLive)),
  NodeRuntime.runMain({
    disableErrorReporting: true,
    // SIGTERM / SIGINT end `serve` and `worker` by interruption: a clean stop, exit status 0.
    teardown: (exit, onExit) =>
      Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)
  })
)
