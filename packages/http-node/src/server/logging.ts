import { Layer, Logger, References } from "effect"
import type { LogLevel } from "effect/LogLevel"

const levels: ReadonlyArray<LogLevel> = ["All", "Trace", "Debug", "Info", "Warn", "Error", "Fatal", "None"]

/**
 * Structured JSON log lines on stderr (stdout stays for the CLI's JSON
 * output). `OPSPLATFORM_LOG_LEVEL` sets the threshold (default Info).
 */
export const LoggingLive = (env: NodeJS.ProcessEnv = process.env): Layer.Layer<never> => {
  const wanted = env.OPSPLATFORM_LOG_LEVEL ?? "Info"
  const level = levels.find((l) => l.toLowerCase() === wanted.toLowerCase()) ?? "Info"
  return Layer.mergeAll(
    Logger.layer([Logger.withConsoleError(Logger.formatJson)]),
    Layer.succeed(References.MinimumLogLevel, level)
  )
}
