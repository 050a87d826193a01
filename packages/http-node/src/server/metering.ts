import { Effect, Layer } from "effect"
import { ForwardingSettings, UsageForwarder } from "@opsplatform/core"
import { CoreConfig } from "../config/Configuration.ts"
import { StripePaymentProcessor } from "./stripe.ts"

/**
 * How the SQL store writes usage reports (`OPSPLATFORM_METERING_GROUP_MAX`,
 * `OPSPLATFORM_METERING_GROUPS_IN_FLIGHT`).
 */
export const RecordingSettingsLive = Layer.effect(
  ForwardingSettings.RecordingSettings,
  Effect.map(CoreConfig, (config) => config.metering.recording)
)

/** The forwarder with Stripe as its processor, as configured (docs/decisions.md, "Usage metering"). */
export const UsageForwarderLive = Layer.unwrap(Effect.map(CoreConfig, ({ metering }) =>
  UsageForwarder.UsageForwarder.layer.pipe(
    Layer.provide(StripePaymentProcessor(metering.stripe)),
    Layer.provide(Layer.succeed(ForwardingSettings.ForwardingSettings, metering.forwarding))
  )))

/**
 * The forwarder as a background job (inside `serve`, and in `opsplatform
 * worker`): runs until the enclosing scope closes (SIGTERM), then lets each
 * stream finish the call under way.
 */
export const usageForwarderJob = Layer.effectDiscard(Effect.gen(function*() {
  const forwarder = yield* UsageForwarder.UsageForwarder
  const { stripe } = (yield* CoreConfig).metering
  const environments = Object.keys(stripe.keys)
  yield* Effect.forkScoped(forwarder.run)
  yield* Effect.logInfo("usage forwarder started").pipe(Effect.annotateLogs({ environments, stripe: stripe.apiBase.origin }))
  if (environments.length === 0) {
    yield* Effect.logWarning(
      "no Stripe key is configured (OPSPLATFORM_STRIPE_TEST_KEY, OPSPLATFORM_STRIPE_LIVE_KEY): usage records wait as pending"
    )
  }
})).pipe(Layer.provide(UsageForwarderLive))
