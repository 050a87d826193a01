import { Effect, Layer, Redacted } from "effect"
import { MeteringRules, PaymentProcessor, type Tenant } from "@opsplatform/core"
import Stripe from "stripe"
import type { StripeSettings } from "../config/Configuration.ts"

export type { StripeSettings } from "../config/Configuration.ts"

/** Stripe's answer to an identifier it already holds (a 400, not a silent no-op). */
const DUPLICATE_IDENTIFIER = /An event already exists with identifier/

const header = (headers: unknown, name: string): string | undefined => {
  const value = (headers as Record<string, unknown> | undefined)?.[name]
  return typeof value === "string" ? value : Array.isArray(value) && typeof value[0] === "string" ? value[0] : undefined
}

/** How Stripe's answer, as the SDK reports it, files a call. */
export const callResult = (error: unknown): MeteringRules.CallResult => {
  if (!(error instanceof Stripe.errors.StripeError)) {
    return { _tag: "Unavailable", status: null, message: error instanceof Error ? error.message : String(error) }
  }
  const status = error.statusCode ?? null
  const message = error.message || `Stripe answered ${status ?? "nothing"}`
  if (status === 400 && error.code !== "rate_limit") {
    return error.code === "duplicate_meter_event" || DUPLICATE_IDENTIFIER.test(message)
      ? { _tag: "AlreadyRecorded", message }
      : { _tag: "Refused", status, message }
  }
  const retryAfter = Number(header(error.headers, "retry-after"))
  return {
    _tag: "Unavailable",
    status,
    message,
    retryAfterMs: Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter * 1000 : undefined
  }
}

/**
 * The PaymentProcessor port on Stripe Billing meter events, through the
 * official `stripe` SDK pointed at `apiBase`. The SDK's own retries are off
 * (`maxNetworkRetries: 0`): the forwarder retries, with backoff and jitter,
 * after recording each attempt. Each call has the SDK's fresh idempotency
 * key; the event's identifier is what makes a resend harmless.
 */
export const StripePaymentProcessor = (settings: StripeSettings): Layer.Layer<PaymentProcessor.PaymentProcessor> =>
  Layer.sync(PaymentProcessor.PaymentProcessor, () => {
    const base = settings.apiBase
    const clients = new Map<Tenant.Environment, Stripe>()
    for (const [environment, key] of Object.entries(settings.keys) as Array<[Tenant.Environment, Redacted.Redacted<string>]>) {
      clients.set(
        environment,
        new Stripe(Redacted.value(key), {
          host: base.hostname,
          port: base.port === "" ? (base.protocol === "http:" ? 80 : 443) : Number(base.port),
          protocol: base.protocol === "http:" ? "http" : "https",
          maxNetworkRetries: 0,
          timeout: settings.timeoutMs,
          telemetry: false,
          appInfo: { name: settings.appName }
        })
      )
    }
    return PaymentProcessor.PaymentProcessor.of({
      environments: [...clients.keys()],
      send: (environment, event) => {
        const client = clients.get(environment)
        if (client === undefined) {
          return Effect.succeed({ _tag: "Unavailable", status: null, message: `No Stripe key for the ${environment} environment` })
        }
        return Effect.tryPromise({
          try: () =>
            client.billing.meterEvents.create({
              event_name: event.eventName,
              payload: { stripe_customer_id: event.customerId, value: String(event.value) },
              identifier: event.identifier,
              timestamp: event.timestamp
            }),
          catch: callResult
        }).pipe(
          Effect.as<MeteringRules.CallResult>({ _tag: "Accepted" }),
          Effect.catch((result) => Effect.succeed(result))
        )
      }
    })
  })
