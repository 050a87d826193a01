import { Context, Effect, Layer } from "effect"
import type { Environment } from "../shared/tenant.ts"
import type { CallResult } from "./rules.ts"

/** One meter event as the processor takes it (Stripe Billing: `POST /v1/billing/meter_events`). */
export interface MeterEvent {
  readonly eventName: string
  readonly customerId: string
  /** A whole number. */
  readonly value: number
  /** Unix seconds. */
  readonly timestamp: number
  /** Unique per event: the processor refuses a second event under it, which is how a resend stays harmless. */
  readonly identifier: string
}

/**
 * The payment processor usage is forwarded to. The host provides it with a
 * credential per environment (sandbox uses the processor's test mode, live its
 * live mode); usage of an environment without one waits, `pending`, until one
 * is configured. `send` never fails: every answer, and no answer, is a
 * `CallResult` the forwarder files.
 */
export class PaymentProcessor extends Context.Service<PaymentProcessor, {
  /** The environments a credential is configured for. */
  readonly environments: ReadonlyArray<Environment>
  readonly send: (environment: Environment, event: MeterEvent) => Effect.Effect<CallResult>
}>()("@opsplatform/core/metering/PaymentProcessor") {
  /** No credential at all: nothing is sent and every usage record waits. */
  static readonly layerUnconfigured: Layer.Layer<PaymentProcessor> = Layer.succeed(
    PaymentProcessor,
    PaymentProcessor.of({
      environments: [],
      send: () => Effect.succeed({ _tag: "Unavailable", status: null, message: "No processor credential is configured" })
    })
  )
}
