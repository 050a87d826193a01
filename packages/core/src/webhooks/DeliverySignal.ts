import { Context, Effect, Layer } from "effect"
import { makeWakeSignal, type WakeSignal } from "../shared/wakeSignal.ts"

/** Wakes delivery workers when new deliveries commit (see `WakeSignal`). */
export class DeliverySignal extends Context.Service<DeliverySignal, WakeSignal>()("@opsplatform/core/webhooks/DeliverySignal") {
  static readonly layer: Layer.Layer<DeliverySignal> = Layer.effect(DeliverySignal, Effect.map(makeWakeSignal, DeliverySignal.of))
}
