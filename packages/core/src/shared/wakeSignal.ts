import { Duration, Effect, Latch } from "effect"

/**
 * Wakes a background worker when new work commits, so it starts in
 * milliseconds rather than at its next poll. Only a hint: workers poll
 * anyway, so a lost wake-up delays work by at most one poll interval.
 */
export interface WakeSignal {
  readonly notify: Effect.Effect<void>
  /** Forgets earlier wake-ups; call before looking for work. */
  readonly reset: Effect.Effect<void>
  /** Returns on the next wake-up since `reset`, or after `timeoutMs`. */
  readonly wait: (timeoutMs: number) => Effect.Effect<void>
}

export const makeWakeSignal: Effect.Effect<WakeSignal> = Effect.map(Latch.make(false), (latch) => ({
  notify: Effect.asVoid(latch.open),
  reset: Effect.asVoid(latch.close),
  wait: (timeoutMs) => latch.await.pipe(Effect.timeoutOption(Duration.millis(timeoutMs)), Effect.asVoid)
}))
