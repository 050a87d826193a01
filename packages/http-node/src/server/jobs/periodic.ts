import { Cause, Duration, Effect, Layer, Schedule } from "effect"

/**
 * Seconds between two passes of a background job, from the environment
 * variable `name`: a whole number from 1 to 86400, `fallback` when unset,
 * undefined when it is anything else (the job refuses to start).
 */
export const intervalSecFromEnv = (name: string, fallback: number, env: NodeJS.ProcessEnv = process.env): number | undefined => {
  const raw = env[name]
  if (raw === undefined || raw.trim() === "") return fallback
  const seconds = Number(raw)
  return Number.isInteger(seconds) && seconds >= 1 && seconds <= 86_400 ? seconds : undefined
}

/**
 * A job inside `serve`: a pass at start, then one every `seconds` (read from
 * the environment: `interval`), in the server's scope. A failed pass is logged
 * as `<name> pass failed` and the next one runs as planned.
 */
export const periodicJob = <R>(options: {
  readonly name: string
  readonly interval: { readonly variable: string; readonly seconds: () => number | undefined }
  readonly pass: Effect.Effect<void, never, R>
}): Layer.Layer<never, never, R> =>
  Layer.effectDiscard(Effect.gen(function*() {
    const seconds = options.interval.seconds()
    if (seconds === undefined) {
      return yield* Effect.die(new Error(`${options.interval.variable} must be a whole number of seconds from 1 to 86400`))
    }
    const pass = options.pass.pipe(
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.logError(`${options.name} pass failed`, cause)
      )
    )
    yield* Effect.forkScoped(Effect.repeat(pass, Schedule.spaced(Duration.seconds(seconds))))
  }))
