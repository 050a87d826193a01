import { Schema, Struct } from "effect"
import { ContactId } from "../contacts/model.ts"
import { Instant, IsoDateTime, isPattern, Uuid } from "../shared/schemas.ts"

export const SubscriptionId = Uuid.pipe(Schema.brand("SubscriptionId"))
export type SubscriptionId = typeof SubscriptionId.Type

export const UsageRecordId = Uuid.pipe(Schema.brand("UsageRecordId"))
export type UsageRecordId = typeof UsageRecordId.Type

/** The payment processors usage is forwarded to (docs/decisions.md, "Usage metering"). */
export const Processor = Schema.Literals(["stripe"])
export type Processor = typeof Processor.Type

/** Usage is accepted only while a subscription is `active`; `cancelled` is final. */
export const SubscriptionStatus = Schema.Literals(["active", "paused", "cancelled"])
export type SubscriptionStatus = typeof SubscriptionStatus.Type

/** A Stripe customer id, as the meter's default customer mapping (`stripe_customer_id`) expects. */
export const ProcessorCustomerId = Schema.String.check(
  isPattern(/^cus_[A-Za-z0-9]{1,251}$/, { message: "must be a Stripe customer id, e.g. cus_NciAYcXfLnqBoz" })
).annotate({ description: "The processor's customer the usage is billed to", examples: ["cus_NciAYcXfLnqBoz"] })

/** The `event_name` of the processor's meter: 1 to 100 printable ASCII characters, no spaces (Stripe's limit is 100). */
export const MeterEventName = Schema.String.check(
  isPattern(/^[\x21-\x7e]{1,100}$/, { message: "must be 1 to 100 printable ASCII characters without spaces" })
).annotate({ description: "The event name the processor's meter listens to", examples: ["api_requests"] })

export const Subscription = Schema.Struct({
  id: SubscriptionId,
  contact_id: ContactId.annotate({ description: "The customer (a contact of this organization environment)" }),
  processor: Processor,
  processor_customer_id: ProcessorCustomerId,
  meter_event_name: MeterEventName,
  status: SubscriptionStatus,
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}).annotate({ identifier: "Subscription" })
export type Subscription = typeof Subscription.Type

/** The contact and the processor are fixed at creation; a subscription starts active. */
export const SubscriptionCreate = Subscription.mapFields(
  Struct.pick(["contact_id", "processor", "processor_customer_id", "meter_event_name"])
).mapFields(Struct.mapPick(["processor"], Schema.optionalKey)).annotate({ identifier: "SubscriptionCreate" })
export type SubscriptionCreate = typeof SubscriptionCreate.Type

export const SubscriptionUpdate = Subscription.mapFields(
  Struct.pick(["processor_customer_id", "meter_event_name", "status"])
).mapFields(Struct.map(Schema.optionalKey)).annotate({ identifier: "SubscriptionUpdate" })
export type SubscriptionUpdate = typeof SubscriptionUpdate.Type

export const SubscriptionFilter = Schema.Struct({
  status: Schema.optionalKey(SubscriptionStatus),
  contact_id: Schema.optionalKey(Uuid)
})
export type SubscriptionFilter = typeof SubscriptionFilter.Type

/**
 * Where forwarding a usage record stands: `pending` (not sent yet, or no key
 * for its environment), `sending` (a call is under way), `retrying` (the
 * processor was unavailable; due again at `next_attempt_at`), `delivered`
 * (the processor accepted it, or already held its identifier), `failed` (the
 * processor refused it; `last_error` says why). Only `failed` and `delivered`
 * are final.
 */
export const ForwardingStatus = Schema.Literals(["pending", "sending", "retrying", "delivered", "failed"])
export type ForwardingStatus = typeof ForwardingStatus.Type

/** Quantities are whole numbers JSON carries exactly. */
export const Quantity = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })).annotate({
  description: `A whole number from 1 to ${Number.MAX_SAFE_INTEGER}`
})

export const UsageIdentifier = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100)).annotate({
  description: "Your id for this report, 1 to 100 characters: a retry with the same identifier is a no-op"
})

/** `POST /subscriptions/{id}/usage` (spec): quantity, and optionally when and under which identifier. */
export const UsageReport = Schema.Struct({
  quantity: Quantity,
  timestamp: Schema.optionalKey(Instant.annotate({
    description: "When the usage happened: within the last 35 days and at most 5 minutes ahead (default: now)"
  })),
  identifier: Schema.optionalKey(UsageIdentifier)
}).annotate({ identifier: "UsageReport" })
export type UsageReport = typeof UsageReport.Type

/** A usage record as accepted: the facts of the report and what it is forwarded as. */
export const StoredUsage = Schema.Struct({
  id: UsageRecordId,
  subscription_id: SubscriptionId,
  identifier: UsageIdentifier,
  quantity: Quantity,
  timestamp: IsoDateTime,
  processor: Processor,
  processor_customer_id: ProcessorCustomerId,
  meter_event_name: MeterEventName,
  /** Retries under this identifier whose quantity or timestamp differed from the record's. */
  differing_retries: Schema.Int,
  last_differing_retry_at: Schema.NullOr(IsoDateTime),
  created_at: IsoDateTime
})
export type StoredUsage = typeof StoredUsage.Type

/** Where its forwarding stands (the outbox row of the record). */
export const Forwarding = Schema.Struct({
  forwarding_status: ForwardingStatus,
  attempts: Schema.Int.annotate({ description: "Calls made to the processor so far" }),
  next_attempt_at: Schema.NullOr(IsoDateTime),
  last_attempt_at: Schema.NullOr(IsoDateTime),
  last_error: Schema.NullOr(Schema.String).annotate({ description: "The processor's message when it refused or failed" }),
  forwarded_at: Schema.NullOr(IsoDateTime)
})
export type Forwarding = typeof Forwarding.Type

export const UsageRecord = StoredUsage.mapFields(Struct.assign(Forwarding.fields)).annotate({
  identifier: "UsageRecord",
  description: "A usage report as recorded, with where its forwarding to the processor stands. Its `id` is the " +
    "identifier of the meter event the processor receives."
})
export type UsageRecord = typeof UsageRecord.Type

export const UsageFilter = Schema.Struct({ forwarding_status: Schema.optionalKey(ForwardingStatus) })
export type UsageFilter = typeof UsageFilter.Type
