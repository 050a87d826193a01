import { Context, Duration, Effect, Latch, Layer } from "effect"

/**
 * Wakes delivery workers when new deliveries commit, so an event goes out in
 * milliseconds rather than at the next poll. Only a hint: workers poll anyway,
 * so a lost wake-up delays a delivery by at most one poll interval.
 */
export class DeliverySignal extends Context.Service<DeliverySignal, {
  readonly notify: Effect.Effect<void>
  /** Forgets earlier wake-ups; call before looking for work. */
  readonly reset: Effect.Effect<void>
  /** Returns on the next wake-up since `reset`, or after `timeoutMs`. */
  readonly wait: (timeoutMs: number) => Effect.Effect<void>
}>()("@opsplatform/core/webhooks/DeliverySignal") {
  static readonly layer: Layer.Layer<DeliverySignal> = Layer.effect(
    DeliverySignal,
    Effect.map(Latch.make(false), (latch) =>
      DeliverySignal.of({
        notify: Effect.asVoid(latch.open),
        reset: Effect.asVoid(latch.close),
        wait: (timeoutMs) => latch.await.pipe(Effect.timeoutOption(Duration.millis(timeoutMs)), Effect.asVoid)
      }))
  )
}
