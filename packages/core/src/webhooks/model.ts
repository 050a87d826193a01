import { Schema } from "effect"
import { subscribableEventTypes } from "../events/catalog.ts"
import { IsoDateTime } from "../shared/schemas.ts"
import type { Tenant } from "../shared/tenant.ts"

/** Where a delivery stands (DESIGN: Events and webhooks). `failed` will be retried; `dead` will not. */
export const DeliveryStatus = Schema.Literals(["pending", "sending", "succeeded", "failed", "dead"])
export type DeliveryStatus = typeof DeliveryStatus.Type

/** Why a subscription stopped receiving: its owner turned it off, or its endpoint answered 410 Gone. */
export const DisabledReason = Schema.Literals(["by_request", "endpoint_gone"])
export type DisabledReason = typeof DisabledReason.Type

export const WebhookSubscription = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  description: Schema.NullOr(Schema.String),
  event_types: Schema.Array(Schema.String),
  enabled: Schema.Boolean,
  disabled_reason: Schema.NullOr(DisabledReason),
  /** While a rotated-out secret is still valid, when it stops being used; `null` otherwise. */
  previous_secret_expires_at: Schema.NullOr(IsoDateTime),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "WebhookSubscription" })
export type WebhookSubscription = typeof WebhookSubscription.Type

/** A subscription with its signing secret: returned once, on creation and on rotation. */
export const WebhookSubscriptionWithSecret = Schema.Struct({
  ...WebhookSubscription.fields,
  secret: Schema.String.annotate({ description: "The signing secret, `whsec_` + base64. Shown only in this response." })
}).annotate({ identifier: "WebhookSubscriptionWithSecret" })
export type WebhookSubscriptionWithSecret = typeof WebhookSubscriptionWithSecret.Type

export const MAX_URL_LENGTH = 2048
export const MAX_DESCRIPTION_LENGTH = 500

const WebhookUrl = Schema.String.check(
  Schema.isMinLength(1),
  Schema.isMaxLength(MAX_URL_LENGTH)
).annotate({ description: "The receiver's address: https (plain http is accepted in the sandbox only)" })

const SubscribableType = Schema.Literals(subscribableEventTypes as unknown as readonly [string, ...Array<string>])

const EventTypes = Schema.Array(SubscribableType).check(
  Schema.makeFilter((types: ReadonlyArray<string>) => types.length > 0 || "must name at least one event type"),
  Schema.makeFilter((types: ReadonlyArray<string>) => new Set(types).size === types.length || "must not repeat a type")
).annotate({ description: "Event types to receive (see GET /v1/webhooks/events)" })

const Description = Schema.NullOr(Schema.String.check(Schema.isMaxLength(MAX_DESCRIPTION_LENGTH)))

export const WebhookSubscriptionCreate = Schema.Struct({
  url: WebhookUrl,
  event_types: EventTypes,
  description: Schema.optionalKey(Description)
}).annotate({ identifier: "WebhookSubscriptionCreate" })
export type WebhookSubscriptionCreate = typeof WebhookSubscriptionCreate.Type

export const WebhookSubscriptionUpdate = Schema.Struct({
  url: Schema.optionalKey(WebhookUrl),
  event_types: Schema.optionalKey(EventTypes),
  description: Schema.optionalKey(Description),
  enabled: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "WebhookSubscriptionUpdate" })
export type WebhookSubscriptionUpdate = typeof WebhookSubscriptionUpdate.Type

export const DEFAULT_ROTATION_GRACE_SECONDS = 24 * 60 * 60
export const MAX_ROTATION_GRACE_SECONDS = 7 * 24 * 60 * 60

export const WebhookSecretRotate = Schema.Struct({
  grace_period_seconds: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: MAX_ROTATION_GRACE_SECONDS })).annotate({
      description: "How long the previous secret stays valid, in seconds (default 86400; 0 ends it now)"
    })
  )
}).annotate({ identifier: "WebhookSecretRotate" })
export type WebhookSecretRotate = typeof WebhookSecretRotate.Type

export const WebhookAttempt = Schema.Struct({
  number: Schema.Int.annotate({ description: "1 for the delivery's first attempt, counting across redeliveries" }),
  attempted_at: IsoDateTime,
  status_code: Schema.NullOr(Schema.Int),
  duration_ms: Schema.Int,
  error: Schema.NullOr(Schema.String),
  response_body: Schema.NullOr(Schema.String.annotate({ description: "The first 4 KiB of the receiver's answer" })),
  next_attempt_at: Schema.NullOr(IsoDateTime.annotate({ description: "When the retry this attempt scheduled is due" }))
}).annotate({ identifier: "WebhookAttempt" })
export type WebhookAttempt = typeof WebhookAttempt.Type

/** How many of a delivery's attempts it carries inline; the full history is its attempts list. */
export const INLINE_ATTEMPTS = 10

export const WebhookDelivery = Schema.Struct({
  id: Schema.String,
  subscription_id: Schema.String,
  event_id: Schema.String,
  event_type: Schema.String,
  status: DeliveryStatus,
  attempt_count: Schema.Int.annotate({ description: "Attempts made over the delivery's life" }),
  next_attempt_at: Schema.NullOr(IsoDateTime),
  last_attempt_at: Schema.NullOr(IsoDateTime),
  last_status_code: Schema.NullOr(Schema.Int),
  last_error: Schema.NullOr(Schema.String),
  attempts: Schema.Array(WebhookAttempt).annotate({
    description: `The ${INLINE_ATTEMPTS} most recent attempts, newest first`
  }),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "WebhookDelivery" })
export type WebhookDelivery = typeof WebhookDelivery.Type

export const WebhookEventType = Schema.Struct({
  type: Schema.String,
  description: Schema.String
}).annotate({ identifier: "WebhookEventType" })
export type WebhookEventType = typeof WebhookEventType.Type

export const WebhookRedeliver = Schema.Struct({
  force: Schema.optionalKey(Schema.Boolean.annotate({ description: "Required to send an already succeeded delivery again" }))
}).annotate({ identifier: "WebhookRedeliver" })
export type WebhookRedeliver = typeof WebhookRedeliver.Type

export const WebhookTestResult = Schema.Struct({
  event_id: Schema.String,
  delivery_id: Schema.String
}).annotate({ identifier: "WebhookTestResult" })
export type WebhookTestResult = typeof WebhookTestResult.Type

export interface DeliveryFilter {
  readonly status?: DeliveryStatus | undefined
}

/** A subscription as stored, with its tenant. */
export interface StoredSubscription {
  readonly id: string
  readonly tenant: Tenant
  readonly url: string
  readonly description: string | null
  readonly event_types: ReadonlyArray<string>
  readonly enabled: boolean
  readonly disabled_reason: DisabledReason | null
  readonly created_at: string
  readonly updated_at: string
}

/** A signing secret as stored: sealed under the operator key. `expires_at` null means current. */
export interface StoredSecret {
  readonly id: string
  readonly subscription_id: string
  readonly sealed: string
  readonly created_at: string
  readonly expires_at: string | null
}

/** The delivery state a worker writes back after an attempt. */
export interface DeliveryOutcome {
  readonly id: string
  readonly claimToken: string
  readonly status: "succeeded" | "failed" | "dead"
  /** Attempts used of the current budget. */
  readonly attempts: number
  readonly nextAttemptAt: string | null
  readonly lastAttemptAt: string
  readonly lastStatusCode: number | null
  readonly lastError: string | null
  /** The attempts to log (the one just made, and one left without an outcome by a stopped worker). */
  readonly log: ReadonlyArray<AttemptRecord>
  /** The receiver answered 410 Gone: disable the subscription. */
  readonly disableSubscription: boolean
}

export interface AttemptRecord extends WebhookAttempt {
  readonly id: string
  readonly delivery_id: string
}

/** A delivery a worker has leased: everything needed to send it without another query. */
export interface ClaimedDelivery {
  readonly id: string
  readonly tenant: Tenant
  readonly subscriptionId: string
  readonly url: string
  readonly eventId: string
  readonly eventType: string
  /** The exact body to send. */
  readonly payload: string
  /** Attempts used of the current budget before this claim. */
  readonly attempts: number
  /** The number this attempt carries in the log. */
  readonly attemptNumber: number
  /** The previous lease ran out without an outcome (its worker stopped): that attempt counts as failed. */
  readonly reclaimed: boolean
  readonly claimToken: string
  readonly secrets: ReadonlyArray<{ readonly id: string; readonly sealed: string }>
}
