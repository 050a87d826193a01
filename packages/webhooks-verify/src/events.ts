/**
 * The platform's events, as types only (nothing here exists at run time).
 * They follow the specification's Events section and core's event catalog;
 * a test keeps the two in step. `data` is as delivered: every event's data
 * carries the `organizationId` the delivery layer adds.
 */

export type Environment = "live" | "sandbox"

/** The body of every webhook. */
export interface EventEnvelope<Type extends string = string, Data = { readonly [field: string]: unknown }> {
  /** Event id, `evt_…`; equal to the `webhook-id` header. Dedupe on it: an event can arrive more than once. */
  readonly id: string
  readonly type: Type
  /** Unix seconds. */
  readonly created: number
  readonly environment: Environment
  readonly data: Data
}

export type PaymentSource =
  | "manual"
  | "mark_paid"
  | "bank_match"
  | "provider"
  | "instrument"
  | "receipt"
  | "messaging"
  | "api"

export interface InvoicePayment {
  readonly id: string
  /** Decimal string, e.g. "120.50". */
  readonly amount: string
  /** YYYY-MM-DD */
  readonly payment_date: string
  /** e.g. BANK_TRANSFER */
  readonly method: string
  readonly reference: string
  readonly source: PaymentSource
}

/** What every invoice event says about the invoice after the change. Amounts are decimal strings. */
export interface InvoiceBalance {
  readonly invoice_id: string
  /** The invoice number. */
  readonly number: string
  readonly currency: string
  readonly total: string
  /** Sum of the issued credit notes reversing the invoice. */
  readonly credited_amount: string
  readonly paid_amount: string
  /** Always total - credited_amount - paid_amount, never negative. */
  readonly remaining_amount: string
  /** e.g. PARTIALLY_PAID; on invoice.credited, CREDITED when fully reversed. */
  readonly status: string
  readonly contact_id: string
  readonly organizationId: string
}

/** `invoice.paid` and `invoice.partially_paid`. */
export interface InvoicePaymentData extends InvoiceBalance {
  readonly payment: InvoicePayment
  /** ISO 8601; null on a partial payment. */
  readonly paid_at: string | null
}

export interface InvoiceReversal {
  readonly id: string
  readonly reverses_payment_id: string
  readonly amount: string
  readonly reversed_at: string
}

/** `invoice.payment_reversed`: the re-opened balance and the payment to undo. */
export interface InvoicePaymentReversedData extends InvoiceBalance {
  readonly reversal: InvoiceReversal
}

/** `invoice.credited`: a credit note cancels debt; it is never a payment. `invoice_id` is the source invoice. */
export interface InvoiceCreditedData extends InvoiceBalance {
  /** Owed back when the customer had paid more than the net total. */
  readonly refund_due: string
  readonly fully_credited: boolean
  /** The credit note that triggered the event. */
  readonly credit_note_id: string
}

export type FiscalChangeKind =
  | "became_inactive"
  | "reactivated"
  | "struck_off"
  | "insolvency"
  | "vat_registered"
  | "vat_deregistered"
  | "cash_vat_on"
  | "cash_vat_off"

export interface FiscalChange {
  readonly kind: FiscalChangeKind
  /** YYYY-MM-DD, when the authority publishes a date. */
  readonly effective_date?: string
}

/** The contact is the one the event id names: `evt_fsc_<contactId>_<kind>_<date>`. */
export interface ContactFiscalStatusChangedData {
  /** Ordered by effective date (the check date where none is published); the event id comes from the first. */
  readonly changes: ReadonlyArray<FiscalChange>
  readonly open_invoices: {
    /** Issued invoices of the contact with a balance left. */
    readonly count: number
    /** Their open balance in RON, a decimal string ("1250.00"); foreign-currency invoices at their exchange_rate_ron. */
    readonly balance_ron: string
  }
  readonly organizationId: string
}

/** Identifiers only, no personal data. */
export interface DeliveryRouteDispatchedData {
  readonly id: string
  readonly number: string
  readonly driver_id: string
  readonly vehicle_id: string
  readonly stop_count: number
  readonly dispatched_at: string
  readonly organizationId: string
}

/** `fleet_vehicle.created` and `fleet_vehicle.deleted`. */
export interface FleetVehicleData {
  readonly id: string
  readonly plate: string
  readonly organizationId: string
}

export interface FleetVehicleUpdatedData extends FleetVehicleData {
  /** Names of the fields that changed, never their values. */
  readonly changed_fields: ReadonlyArray<string>
}

/** No parties, panel, solution or notes. */
export interface CourtCaseHearingAddedData {
  /** The hearing. */
  readonly id: string
  readonly case_id: string
  /** YYYY-MM-DD */
  readonly hearing_date: string
  readonly court: string
  readonly organizationId: string
}

/** Never the body, a snippet, cc or bcc recipients, or attachment names. */
export interface EmailReceivedData {
  readonly object: "email_message"
  /** The stored message. */
  readonly id: string
  /** RFC 5322 Message-ID. */
  readonly message_id: string | null
  readonly mailbox: string
  readonly recipient: string
  readonly from: string
  readonly subject: string
  readonly received_at: string
  readonly size_bytes: number | null
  readonly has_attachments: boolean
  readonly organizationId: string
}

/** The test ping a subscriber asks for. */
export interface WebhookTestData {
  readonly subscription_id: string
  readonly organizationId: string
}

/** Each event type and its `data`. */
export interface EventDataMap {
  readonly "invoice.paid": InvoicePaymentData
  readonly "invoice.partially_paid": InvoicePaymentData
  readonly "invoice.payment_reversed": InvoicePaymentReversedData
  readonly "invoice.credited": InvoiceCreditedData
  readonly "contact.fiscal_status_changed": ContactFiscalStatusChangedData
  readonly "delivery_route.dispatched": DeliveryRouteDispatchedData
  readonly "fleet_vehicle.created": FleetVehicleData
  readonly "fleet_vehicle.updated": FleetVehicleUpdatedData
  readonly "fleet_vehicle.deleted": FleetVehicleData
  readonly "court_case.hearing_added": CourtCaseHearingAddedData
  readonly "email.received": EmailReceivedData
  readonly "webhook.test": WebhookTestData
}

export type EventType = keyof EventDataMap

export type EventData<T extends EventType> = EventDataMap[T]

/** A verified event, discriminated on `type`: `switch (event.type)` narrows `data`. */
export type WebhookEvent<T extends EventType = EventType> = { readonly [K in T]: EventEnvelope<K, EventDataMap[K]> }[T]

export type InvoicePaidEvent = WebhookEvent<"invoice.paid">
export type InvoicePartiallyPaidEvent = WebhookEvent<"invoice.partially_paid">
export type InvoicePaymentReversedEvent = WebhookEvent<"invoice.payment_reversed">
export type InvoiceCreditedEvent = WebhookEvent<"invoice.credited">
export type ContactFiscalStatusChangedEvent = WebhookEvent<"contact.fiscal_status_changed">
export type DeliveryRouteDispatchedEvent = WebhookEvent<"delivery_route.dispatched">
export type FleetVehicleCreatedEvent = WebhookEvent<"fleet_vehicle.created">
export type FleetVehicleUpdatedEvent = WebhookEvent<"fleet_vehicle.updated">
export type FleetVehicleDeletedEvent = WebhookEvent<"fleet_vehicle.deleted">
export type CourtCaseHearingAddedEvent = WebhookEvent<"court_case.hearing_added">
export type EmailReceivedEvent = WebhookEvent<"email.received">
export type WebhookTestEvent = WebhookEvent<"webhook.test">
