import { Effect, Layer, Logger, References } from "effect"
import type { LogLevel } from "effect/LogLevel"
import { load, logConfig } from "../config/Configuration.ts"
import { jsonLogger } from "./observability.ts"

const levels: ReadonlyArray<LogLevel> = ["All", "Trace", "Debug", "Info", "Warn", "Error", "Fatal", "None"]

/** The log formats `OPSPLATFORM_LOG_FORMAT` accepts. */
export const logFormats = ["json", "pretty"] as const

/**
 * Log lines on stderr (stdout stays for the CLI's JSON output).
 * `OPSPLATFORM_LOG_LEVEL` sets the threshold (default Info);
 * `OPSPLATFORM_LOG_FORMAT` is `json` (default: one JSON object a line, for log
 * collectors, with the trace and span ids while spans are exported) or `pretty` (time, level and message, then the annotations, in
 * colour on a terminal, for people). An unknown format logs JSON and says so.
 */
export const LoggingLive: Layer.Layer<never> = Layer.unwrap(Effect.map(load(logConfig), (configured) => {
  const level = levels.find((l) => l.toLowerCase() === configured.level.toLowerCase()) ?? "Info"
  const format = configured.format.toLowerCase()
  const logger = format === "pretty"
    ? Logger.layer([Logger.consolePretty({ colors: "auto" })]).pipe(Layer.provideMerge(Layer.succeed(Logger.LogToStderr, true)))
    : Logger.layer([Logger.withConsoleError(jsonLogger)])
  const warning = (logFormats as ReadonlyArray<string>).includes(format)
    ? Layer.empty
    : Layer.effectDiscard(Effect.logWarning(
      `OPSPLATFORM_LOG_FORMAT must be one of ${logFormats.join(", ")}, got '${configured.format}'; logging JSON`
    ))
  return Layer.mergeAll(warning.pipe(Layer.provide(logger)), logger, Layer.succeed(References.MinimumLogLevel, level))
}))
