import { Cause, Effect } from "effect"

/**
 * For background loops: logs a failure and carries on with `fallback`, so one
 * bad pass never stops the loop; an interruption (shutdown) stays one.
 */
export const orLog = <A, E, R, B>(self: Effect.Effect<A, E, R>, message: string, fallback: B): Effect.Effect<A | B, never, R> =>
  Effect.catchCause(self, (cause) =>
    Cause.hasInterruptsOnly(cause)
      ? Effect.failCause(cause as Cause.Cause<never>)
      : Effect.as(Effect.logError(message, Cause.squash(cause)), fallback))
