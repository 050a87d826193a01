import { Cause, Duration, Effect, Layer, Schedule } from "effect"
import { instrumentedPass } from "../observability.ts"

/**
 * A job inside `serve`: a pass at start, then one every `seconds` (as
 * configured), in the server's scope. A pass answers how many items it
 * handled; it is timed, counted and traced under `metric` (the job's label
 * in the metrics, `job <metric>` as its span). A failed pass is logged as
 * `<name> pass failed` and the next one runs as planned.
 */
export const periodicJob = <R, R2>(options: {
  readonly name: string
  /** The job's label in the metrics and its span: short, lower case, underscores. */
  readonly metric: string
  readonly seconds: Effect.Effect<number, never, R2>
  readonly pass: Effect.Effect<number, never, R>
}): Layer.Layer<never, never, R | R2> =>
  Layer.effectDiscard(Effect.gen(function*() {
    const seconds = yield* options.seconds
    const pass = instrumentedPass(options.metric, options.pass).pipe(
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.logError(`${options.name} pass failed`, cause)
      )
    )
    yield* Effect.forkScoped(Effect.repeat(pass, Schedule.spaced(Duration.seconds(seconds))))
  }))
