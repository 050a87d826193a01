import { Context, Effect } from "effect"
import * as fs from "node:fs"

/**
 * What a command sees of the process it runs in: the environment it reads its
 * database and settings from, its standard input, and its exit status. The
 * `opsplatform` binary gives it the real process (the default); `runCommand`
 * runs a command inside another program with an environment, an input and an
 * exit status of its own.
 */
export interface CliProcessShape {
  readonly env: NodeJS.ProcessEnv
  /** The whole of standard input. */
  readonly readStdin: () => string
  /** Ends the command with exit status 1 once it returns (it still writes what it has to say). */
  readonly fail: () => void
}

export const CliProcess = Context.Reference<CliProcessShape>("@opsplatform/http-node/CliProcess", {
  defaultValue: () => ({
    env: process.env,
    readStdin: () => fs.readFileSync(0, "utf8"),
    fail: () => {
      process.exitCode = 1
    }
  })
})

/** Exit status 1 for the command running now. */
export const failCommand = Effect.gen(function*() {
  ;(yield* CliProcess).fail()
})
