import { Schema } from "effect"
import { IsoDate, IsoDateTime } from "../shared/schemas.ts"
import { Environment } from "../shared/tenant.ts"

/**
 * The platform's events: the envelope every webhook carries, the `data` of
 * each type exactly as the specification lists it, and the id of each event.
 *
 * `data` here is what the domain publishes; the delivery layer adds
 * `organizationId` to every `data` when it sends (see `deliveredData`).
 * Ids are deterministic where the specification fixes a format, so a re-sync
 * that produces the same fact produces the same id and the outbox keeps one.
 */

const Decimal = Schema.String.annotate({ description: "Decimal amount, e.g. \"120.50\"" })

/** The envelope of every webhook body. */
export const EventEnvelope = Schema.Struct({
  id: Schema.String.annotate({ description: "Event id, `evt_...`; equal to the `webhook-id` header" }),
  type: Schema.String,
  created: Schema.Int.annotate({ description: "Unix seconds" }),
  environment: Environment,
  data: Schema.Record(Schema.String, Schema.Unknown)
}).annotate({ identifier: "EventEnvelope" })
export type EventEnvelope = typeof EventEnvelope.Type

export const PaymentSource = Schema.Literals([
  "manual",
  "mark_paid",
  "bank_match",
  "provider",
  "instrument",
  "receipt",
  "messaging",
  "api"
])
export type PaymentSource = typeof PaymentSource.Type

/** The invoice's amounts after the change; `remaining_amount` = total − credited − paid, never negative. */
const invoiceBalance = {
  invoice_id: Schema.String,
  number: Schema.String,
  currency: Schema.String,
  total: Decimal,
  credited_amount: Decimal,
  paid_amount: Decimal,
  remaining_amount: Decimal
}

/** `invoice.paid` and `invoice.partially_paid`. */
export const InvoicePaymentData = Schema.Struct({
  ...invoiceBalance,
  status: Schema.String,
  payment: Schema.Struct({
    id: Schema.String,
    amount: Decimal,
    payment_date: IsoDate,
    method: Schema.String,
    reference: Schema.String,
    source: PaymentSource
  }),
  paid_at: Schema.NullOr(IsoDateTime),
  contact_id: Schema.String
})

/** `invoice.payment_reversed`: the re-opened balance and the reversal naming the payment it undoes. */
export const InvoicePaymentReversedData = Schema.Struct({
  ...invoiceBalance,
  status: Schema.String,
  reversal: Schema.Struct({
    id: Schema.String,
    reverses_payment_id: Schema.String,
    amount: Decimal,
    reversed_at: IsoDateTime
  }),
  contact_id: Schema.String
})

export const InvoiceCreditedData = Schema.Struct({
  ...invoiceBalance,
  refund_due: Decimal,
  status: Schema.String,
  fully_credited: Schema.Boolean,
  credit_note_id: Schema.String,
  contact_id: Schema.String
})

export const FiscalChangeKind = Schema.Literals([
  "became_inactive",
  "reactivated",
  "struck_off",
  "insolvency",
  "vat_registered",
  "vat_deregistered",
  "cash_vat_on",
  "cash_vat_off"
])
export type FiscalChangeKind = typeof FiscalChangeKind.Type

/** One change of fiscal status; `effective_date` only when the authority publishes one. */
export const FiscalChange = Schema.Struct({
  kind: FiscalChangeKind,
  effective_date: Schema.optionalKey(IsoDate)
})
export type FiscalChange = typeof FiscalChange.Type

/**
 * Exactly the spec's two fields. `changes` is ordered by effective date (the
 * check date where none is published), then by the order of the kinds above;
 * `open_invoices` names its fields `count` and `balance_ron`, the open balance
 * of issued invoices in RON (foreign ones at their `exchange_rate_ron`), as a
 * decimal string (decided: docs/decisions.md, "Fiscal status").
 */
export const ContactFiscalStatusChangedData = Schema.Struct({
  changes: Schema.Array(FiscalChange),
  open_invoices: Schema.Struct({
    count: Schema.Int,
    balance_ron: Decimal
  })
})

/** Identifiers only, no personal data. */
export const DeliveryRouteDispatchedData = Schema.Struct({
  id: Schema.String,
  number: Schema.String,
  driver_id: Schema.String,
  vehicle_id: Schema.String,
  stop_count: Schema.Int,
  dispatched_at: IsoDateTime
})

export const FleetVehicleData = Schema.Struct({
  id: Schema.String,
  plate: Schema.String
})

/** `changed_fields` names the fields that changed, never their values. */
export const FleetVehicleUpdatedData = Schema.Struct({
  id: Schema.String,
  plate: Schema.String,
  changed_fields: Schema.Array(Schema.String)
})

/** No parties, panel, solution or notes. */
export const CourtCaseHearingAddedData = Schema.Struct({
  id: Schema.String,
  case_id: Schema.String,
  hearing_date: IsoDate,
  court: Schema.String
})

/** Never the body, a snippet, cc or bcc recipients, or attachment names. */
export const EmailReceivedData = Schema.Struct({
  object: Schema.Literal("email_message"),
  id: Schema.String,
  message_id: Schema.NullOr(Schema.String),
  mailbox: Schema.String,
  recipient: Schema.String,
  from: Schema.String,
  subject: Schema.String,
  received_at: IsoDateTime,
  size_bytes: Schema.NullOr(Schema.Int),
  has_attachments: Schema.Boolean
})

/** The test ping a subscriber asks for; delivered to that one subscription only. */
export const WebhookTestData = Schema.Struct({
  subscription_id: Schema.String
})

/** A domain event as the outbox keeps it, before any delivery. */
export interface OutboxEvent {
  /** The public event id (`evt_...`); deterministic where the spec fixes a format. */
  readonly eventId: string
  readonly type: string
  readonly data: Record<string, unknown>
}

interface EventTypeEntry<S extends Schema.Struct<Schema.Struct.Fields>> {
  readonly data: S
  readonly description: string
  /** Whether a subscription can list it in `event_types` (the test ping is sent on request instead). */
  readonly subscribable: boolean
  /** A `data` as the domain publishes it, shown in the catalog with the organization added (`deliveredData`). */
  readonly example: S["Type"]
}

const entry = <S extends Schema.Struct<Schema.Struct.Fields>>(
  data: S,
  description: string,
  example: S["Type"],
  subscribable = true
): EventTypeEntry<S> => ({ data, description, example, subscribable })

const exampleIds = {
  organization: "0190f5c2-7a1b-7c3d-8e4f-0123456789ab",
  invoice: "0191a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5b",
  contact: "0191a2b3-c4d5-7e6f-8a9b-1c2d3e4f5a6b",
  payment: "0191a2b3-c4d5-7e6f-8a9b-2c3d4e5f6a7b",
  vehicle: "0191a2b3-c4d5-7e6f-8a9b-3c4d5e6f7a8b"
} as const

const exampleBalance = {
  invoice_id: exampleIds.invoice,
  number: "OPS-2026-0042",
  currency: "RON",
  total: "1190.00",
  credited_amount: "0.00"
}

const examplePayment = {
  id: exampleIds.payment,
  amount: "500.00",
  payment_date: "2026-03-02",
  method: "BANK_TRANSFER",
  reference: "OP 1187",
  source: "bank_match" as const
}

/** Every event type, its `data` schema, what makes it fire, and an example of its `data`. */
export const eventTypes = {
  "invoice.paid": entry(InvoicePaymentData, "An issued invoice is settled in full", {
    ...exampleBalance,
    paid_amount: "1190.00",
    remaining_amount: "0.00",
    status: "PAID",
    payment: { ...examplePayment, amount: "690.00" },
    paid_at: "2026-03-02T09:30:00.000Z",
    contact_id: exampleIds.contact
  }),
  "invoice.partially_paid": entry(InvoicePaymentData, "A payment is recorded and a balance remains", {
    ...exampleBalance,
    paid_amount: "500.00",
    remaining_amount: "690.00",
    status: "PARTIALLY_PAID",
    payment: examplePayment,
    paid_at: null,
    contact_id: exampleIds.contact
  }),
  "invoice.payment_reversed": entry(InvoicePaymentReversedData, "A recorded payment is reversed; once per reversal", {
    ...exampleBalance,
    paid_amount: "0.00",
    remaining_amount: "1190.00",
    status: "ISSUED",
    reversal: {
      id: "0191a2b3-c4d5-7e6f-8a9b-4c5d6e7f8a9b",
      reverses_payment_id: exampleIds.payment,
      amount: "500.00",
      reversed_at: "2026-03-03T08:00:00.000Z"
    },
    contact_id: exampleIds.contact
  }),
  "invoice.credited": entry(
    InvoiceCreditedData,
    "A credit note reversing an issued invoice is issued or cancelled and the credited amount changes",
    {
      ...exampleBalance,
      credited_amount: "1190.00",
      paid_amount: "0.00",
      remaining_amount: "0.00",
      refund_due: "0.00",
      status: "CREDITED",
      fully_credited: true,
      credit_note_id: "0191a2b3-c4d5-7e6f-8a9b-5c6d7e8f9a0b",
      contact_id: exampleIds.contact
    }
  ),
  "contact.fiscal_status_changed": entry(
    ContactFiscalStatusChangedData,
    "A customer with open issued invoices changes fiscal status at the tax authority or the trade registry",
    {
      changes: [{ kind: "became_inactive", effective_date: "2026-03-01" }],
      open_invoices: { count: 2, balance_ron: "2380.00" }
    }
  ),
  "delivery_route.dispatched": entry(DeliveryRouteDispatchedData, "A route is sent to its driver; a re-dispatch is a new event", {
    id: "0191a2b3-c4d5-7e6f-8a9b-6c7d8e9f0a1b",
    number: "R-2026-0007",
    driver_id: "0191a2b3-c4d5-7e6f-8a9b-7c8d9e0f1a2b",
    vehicle_id: exampleIds.vehicle,
    stop_count: 12,
    dispatched_at: "2026-03-02T05:45:00.000Z"
  }),
  "fleet_vehicle.created": entry(FleetVehicleData, "A fleet vehicle is created", { id: exampleIds.vehicle, plate: "B101OPS" }),
  "fleet_vehicle.updated": entry(
    FleetVehicleUpdatedData,
    "A fleet vehicle is edited (an edit that changes nothing emits nothing)",
    { id: exampleIds.vehicle, plate: "B101OPS", changed_fields: ["odometer_km", "status"] }
  ),
  "fleet_vehicle.deleted": entry(FleetVehicleData, "A fleet vehicle is deleted", { id: exampleIds.vehicle, plate: "B101OPS" }),
  "court_case.hearing_added": entry(CourtCaseHearingAddedData, "A hearing is added to a court case", {
    id: "0191a2b3-c4d5-7e6f-8a9b-8c9d0e1f2a3b",
    case_id: "0191a2b3-c4d5-7e6f-8a9b-9c0d1e2f3a4b",
    hearing_date: "2026-04-15",
    court: "Tribunalul București"
  }),
  "email.received": entry(EmailReceivedData, "An inbound message lands in an organization mailbox", {
    object: "email_message",
    id: "0191a2b3-c4d5-7e6f-8a9b-ac0d1e2f3a4b",
    message_id: "<20260302093000.1187@client.example>",
    mailbox: "INBOX",
    recipient: "facturi@firma.example",
    from: "contabilitate@client.example",
    subject: "Factura OPS-2026-0042",
    received_at: "2026-03-02T09:30:00.000Z",
    size_bytes: 48213,
    has_attachments: true
  }),
  "webhook.test": entry(
    WebhookTestData,
    "A test ping requested for one subscription",
    { subscription_id: "0191a2b3-c4d5-7e6f-8a9b-bc0d1e2f3a4b" },
    false
  )
} as const

export type EventType = keyof typeof eventTypes
export type EventData<T extends EventType> = (typeof eventTypes)[T]["data"]["Type"]

export const allEventTypes: ReadonlyArray<EventType> = Object.keys(eventTypes) as Array<EventType>
export const subscribableEventTypes: ReadonlyArray<EventType> = allEventTypes.filter((t) => eventTypes[t].subscribable)
export const isEventType = (s: string): s is EventType => Object.hasOwn(eventTypes, s)

/** The webhook body of one type, as delivered: the envelope, `type` fixed, `data` exactly its fields plus `organizationId`. */
export const deliveredBodySchema = <T extends EventType>(type: T) =>
  Schema.Struct({
    ...EventEnvelope.fields,
    type: Schema.Literal(type),
    data: Schema.Struct({
      ...eventTypes[type].data.fields,
      organizationId: Schema.String.annotate({ description: "The organization the event belongs to" })
    })
  })

/**
 * The JSON Schema (draft 2020-12) of a type's webhook body, generated from its
 * Effect schema above, the one source. Objects are closed
 * (`additionalProperties: false`): `data` carries exactly the specification's
 * fields, and a field added later comes with a new schema (docs/decisions.md,
 * "Event catalog").
 */
export const eventJsonSchema = (type: EventType): Record<string, unknown> => {
  const document = Schema.toJsonSchemaDocument(deliveredBodySchema(type), { onExcessProperty: "error" })
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: type,
    description: eventTypes[type].description,
    ...document.schema,
    ...(Object.keys(document.definitions).length === 0 ? {} : { $defs: document.definitions })
  }
}

/** An example body of a type, as a receiver gets it. */
export const exampleBody = (type: EventType): EventEnvelope => ({
  id: "evt_0191a2b3c4d57e6f8a9b0c1d2e3f4a5b",
  type,
  created: 1772443800,
  environment: "live",
  data: deliveredData(eventTypes[type].example as Record<string, unknown>, exampleIds.organization)
})

/** The data as delivered: the domain's data with the organization added. */
export const deliveredData = (data: Record<string, unknown>, organizationId: string): Record<string, unknown> => ({
  ...data,
  organizationId
})

// ---- Event ids ---------------------------------------------------------------

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const hexOfUuid = (uuid: string): string => {
  if (!uuidPattern.test(uuid)) throw new TypeError(`Expected a UUID, got '${uuid}'`)
  return uuid.replace(/-/g, "").toLowerCase()
}

/** `invoice.paid` / `invoice.partially_paid`: one id per payment, whichever path recorded it. */
export const paymentEventId = (paymentId: string): string => `evt_pay_${paymentId}`

/** `invoice.payment_reversed`: one id per reversal. */
export const reversalEventId = (reversalId: string): string => `evt_rev_${reversalId}`

/** `invoice.credited`: a re-sync reaching the same credited amount carries the same id. */
export const creditedEventId = (sourceInvoiceId: string, creditedAmountCents: number): string => {
  if (!Number.isSafeInteger(creditedAmountCents) || creditedAmountCents < 0) {
    throw new TypeError(`creditedAmountCents must be a non-negative integer, got ${creditedAmountCents}`)
  }
  return `evt_cred_${sourceInvoiceId}_${creditedAmountCents}`
}

/** `contact.fiscal_status_changed`, from the first entry of `changes` (date `YYYY-MM-DD`, or the check date). */
export const fiscalStatusEventId = (contactId: string, kind: FiscalChangeKind, date: string): string =>
  `evt_fsc_${contactId}_${kind}_${date}`

export const courtHearingEventId = (hearingId: string): string => `evt_court_hearing_${hearingId}`

/** `email.received`: `evt_` and the 32 hex digits of the stored message's UUID. */
export const emailReceivedEventId = (storedMessageId: string): string => `evt_${hexOfUuid(storedMessageId)}`

/**
 * `delivery_route.dispatched`: the route and the ordinal of this dispatch
 * (1 for the first), so a re-dispatch is a new event and a retried dispatch
 * of the same ordinal is the same one.
 */
export const routeDispatchedEventId = (routeId: string, dispatchOrdinal: number): string => {
  if (!Number.isSafeInteger(dispatchOrdinal) || dispatchOrdinal < 1) {
    throw new TypeError(`dispatchOrdinal must be a positive integer, got ${dispatchOrdinal}`)
  }
  return `evt_dsp_${hexOfUuid(routeId)}_${dispatchOrdinal}`
}

/**
 * Events with no natural key (fleet vehicle changes, test pings): `evt_` and
 * the 32 hex digits of a fresh id from the `Ids` service.
 */
export const freshEventId = (uuid: string): string => `evt_${hexOfUuid(uuid)}`

/** An outbox event of a catalog type, its data checked by the compiler. */
export const event = <T extends EventType>(type: T, eventId: string, data: EventData<T>): OutboxEvent => ({
  eventId,
  type,
  data: data as unknown as Record<string, unknown>
})
