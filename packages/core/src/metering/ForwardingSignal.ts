import { Context, Effect, Layer } from "effect"
import { makeWakeSignal, type WakeSignal } from "../shared/wakeSignal.ts"

/** Wakes the forwarders of this process when a usage record is accepted (see `WakeSignal`). */
export class ForwardingSignal extends Context.Service<ForwardingSignal, WakeSignal>()("@opsplatform/core/metering/ForwardingSignal") {
  static readonly layer: Layer.Layer<ForwardingSignal> = Layer.effect(ForwardingSignal, Effect.map(makeWakeSignal, ForwardingSignal.of))
}
