import { creditedEventId, event, type OutboxEvent, paymentEventId, reversalEventId } from "../events/catalog.ts"
import { formatMinor } from "../shared/money.ts"
import type { InvoiceRecord, PaymentRecord, ReversalRecord } from "./model.ts"
import { balanceOf } from "./rules.ts"

/**
 * The invoice events, exactly as the spec lists their `data` (the catalog's
 * schemas check every field; `organizationId` is added on delivery).
 */

const balanceData = (invoice: InvoiceRecord) => {
  const money = (minor: number) => formatMinor(minor, invoice.currency)
  return {
    invoice_id: invoice.id,
    number: invoice.number ?? "",
    currency: invoice.currency,
    total: money(invoice.total_minor),
    credited_amount: money(invoice.credited_minor),
    paid_amount: money(invoice.paid_minor),
    remaining_amount: money(balanceOf(invoice).remaining_minor)
  }
}

/** `invoice.paid` when the payment settles the invoice, else `invoice.partially_paid`; one id per payment. */
export const paymentEvent = (invoice: InvoiceRecord, payment: PaymentRecord): OutboxEvent => {
  const settled = balanceOf(invoice).remaining_minor === 0
  return event(settled ? "invoice.paid" : "invoice.partially_paid", paymentEventId(payment.id), {
    ...balanceData(invoice),
    status: invoice.status,
    payment: {
      id: payment.id,
      amount: formatMinor(payment.amount_minor, invoice.currency),
      payment_date: payment.payment_date,
      method: payment.method,
      reference: payment.reference,
      source: payment.source
    },
    paid_at: settled ? invoice.paid_at : null,
    contact_id: invoice.contact_id
  })
}

/** `invoice.payment_reversed`: the re-opened balance and the payment the reversal undoes. */
export const reversalEvent = (invoice: InvoiceRecord, reversal: ReversalRecord): OutboxEvent =>
  event("invoice.payment_reversed", reversalEventId(reversal.id), {
    ...balanceData(invoice),
    status: invoice.status,
    reversal: {
      id: reversal.id,
      reverses_payment_id: reversal.reverses_payment_id,
      amount: formatMinor(reversal.amount_minor, invoice.currency),
      reversed_at: reversal.reversed_at
    },
    contact_id: invoice.contact_id
  })

/**
 * `invoice.credited`, after a credit note is issued or cancelled. Its id
 * names the credited amount reached, so reaching an amount again carries an
 * id already used, and the outbox keeps the first (decided: docs/decisions.md).
 */
export const creditedEvent = (invoice: InvoiceRecord, creditNoteId: string): OutboxEvent =>
  event("invoice.credited", creditedEventId(invoice.id, invoice.credited_minor), {
    ...balanceData(invoice),
    refund_due: formatMinor(balanceOf(invoice).refund_due_minor, invoice.currency),
    status: invoice.status,
    fully_credited: invoice.credited_minor >= invoice.total_minor,
    credit_note_id: creditNoteId,
    contact_id: invoice.contact_id
  })
