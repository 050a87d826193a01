import { Clock, Effect } from "effect"
import { Conflict, InvalidTransition, type NotFound, Unprocessable, ValidationFailed } from "../shared/errors.ts"
import { newId } from "../shared/Ids.ts"
import { findOr404 } from "../shared/lookup.ts"
import { formatMinor, parseMinor } from "../shared/money.ts"
import type { Tenant } from "../shared/tenant.ts"
import { isoFromMillis } from "../shared/time.ts"
import { paymentEvent, reversalEvent } from "./events.ts"
import type { InvoiceRepo } from "./InvoiceRepo.ts"
import type { Outbox } from "../events/Outbox.ts"
import type { Ids } from "../shared/Ids.ts"
import type { Transactor } from "../shared/Transactor.ts"
import {
  type InvoiceLineInput,
  type InvoiceRecord,
  type Payment,
  PaymentId,
  type PaymentInput,
  type PaymentMethod,
  type PaymentRecord,
  type Refund,
  type RefundCreate,
  RefundId,
  type RefundRecord,
  type Reversal,
  type ReversalCreate,
  ReversalId,
  type ReversalRecord,
  type StoredLine
} from "./model.ts"
import type { PaymentRepo } from "./PaymentRepo.ts"
import { presentPayment, presentRefund, presentReversal } from "./present.ts"
import { acceptsMoney, balanceOf, invoiceStatus, priceLines } from "./rules.ts"

/**
 * The invoice after its balance changed: the status recomputed from the
 * balance, and `paid_at` set when it becomes settled and cleared when a
 * balance opens again.
 */
export const withBalance = (invoice: InvoiceRecord, change: Partial<Pick<InvoiceRecord, "paid_minor" | "credited_minor">>, at: string): InvoiceRecord => {
  const next = { ...invoice, ...change, updated_at: at }
  const status = invoiceStatus(next)
  return { ...next, status, paid_at: status === "PAID" ? (invoice.status === "PAID" ? invoice.paid_at : at) : null }
}

/** The lines priced in the currency, or a 400 naming the line (or the lines) beyond the largest amount. */
export const pricedLines = (
  lines: ReadonlyArray<InvoiceLineInput>,
  currency: string,
  field?: string
): Effect.Effect<ReadonlyArray<StoredLine>, ValidationFailed> => {
  const priced = priceLines(lines, currency, field)
  return "lines" in priced ? Effect.succeed(priced.lines) : Effect.fail(ValidationFailed.field(priced.field, priced.issue))
}

/** An amount the caller sent, in the invoice's currency, as positive minor units. */
export const amountIn = (text: string, currency: string, field = "amount"): Effect.Effect<number, ValidationFailed> => {
  const minor = parseMinor(text, currency)
  if (minor === undefined) {
    return Effect.fail(ValidationFailed.field(field, `is not an amount in ${currency} (a decimal string with at most its decimals)`))
  }
  return minor > 0 ? Effect.succeed(minor) : Effect.fail(ValidationFailed.field(field, "must be greater than zero"))
}

/** What the service's parts share: the stores, and the invoice locked for the rest of the transaction. */
export interface InvoiceContext {
  readonly invoices: InvoiceRepo["Service"]
  readonly payments: PaymentRepo["Service"]
  readonly outbox: Outbox["Service"]
  readonly ids: Ids["Service"]
  readonly tx: Transactor["Service"]
  readonly today: (tenant: Tenant) => Effect.Effect<string>
  readonly locked: (tenant: Tenant, id: string) => Effect.Effect<InvoiceRecord, NotFound>
}

export type PaymentErrors = NotFound | InvalidTransition | Unprocessable | ValidationFailed

export interface InvoiceMoney {
  /** The one way money is recorded against an invoice, whatever its path (`source`). */
  readonly recordPayment: (tenant: Tenant, id: string, input: PaymentInput) => Effect.Effect<Payment, PaymentErrors>
  /** Records the remaining balance as paid (`source` mark_paid). */
  readonly markPaid: (
    tenant: Tenant,
    id: string,
    input: {
      readonly payment_date?: string | undefined
      readonly method?: PaymentMethod | undefined
      readonly reference?: string | undefined
    }
  ) => Effect.Effect<Payment, PaymentErrors>
  readonly listPayments: (tenant: Tenant, id: string) => Effect.Effect<ReadonlyArray<Payment>, NotFound>
  readonly reversePayment: (
    tenant: Tenant,
    id: string,
    paymentId: string,
    input: ReversalCreate
  ) => Effect.Effect<Reversal, NotFound | Conflict>
  /** Money paid back; at most what was paid beyond the net total. Emits no event. */
  readonly refund: (tenant: Tenant, id: string, input: RefundCreate) => Effect.Effect<Refund, PaymentErrors>
  readonly listRefunds: (tenant: Tenant, id: string) => Effect.Effect<ReadonlyArray<Refund>, NotFound>
}

type Money = InvoiceMoney

/** The money half of the Invoices service: payments from every path, reversals, refunds. */
export const invoiceMoney = (
  context: InvoiceContext,
  find: (tenant: Tenant, id: string) => Effect.Effect<InvoiceRecord, NotFound>
): Money => {
  const { ids, invoices, outbox, payments, tx } = context
  const now = Effect.map(Clock.currentTimeMillis, isoFromMillis)
  const findPayment = (tenant: Tenant, invoiceId: string, paymentId: string) =>
    findOr404("payment", paymentId, (id) => payments.findPayment(tenant, invoiceId, id))
  const acceptingMoney = (invoice: InvoiceRecord) =>
    acceptsMoney(invoice.status)
      ? Effect.void
      : Effect.fail(new InvalidTransition({ resource: "invoice", from: invoice.status, to: "PAID" }))

  const recordPayment: Money["recordPayment"] = Effect.fn("Invoices.recordPayment")(function*(tenant, id, input) {
    return yield* tx.withTransaction(Effect.gen(function*() {
      const invoice = yield* context.locked(tenant, id)
      yield* acceptingMoney(invoice)
      const amount = yield* amountIn(input.amount, invoice.currency)
      const { remaining_minor } = balanceOf(invoice)
      if (amount > remaining_minor) {
        return yield* new Unprocessable({
          errorCode: "payment_exceeds_balance",
          reason: `The payment exceeds the remaining balance of the invoice (${remaining_minor} minor units of ${invoice.currency})`
        })
      }
      const at = yield* now
      const payment: PaymentRecord = {
        id: yield* newId(ids, PaymentId),
        invoice_id: invoice.id,
        amount_minor: amount,
        payment_date: input.payment_date,
        method: input.method,
        reference: input.reference ?? "",
        source: input.source,
        reversal_id: null,
        created_at: at
      }
      const next = withBalance(invoice, { paid_minor: invoice.paid_minor + payment.amount_minor }, at)
      yield* payments.insertPayment(tenant, payment)
      yield* invoices.update(tenant, next).pipe(Effect.orDie)
      yield* outbox.publish(tenant, paymentEvent(next, payment))
      return presentPayment(payment, invoice.currency)
    }))
  })

  return {
    recordPayment,
    markPaid: Effect.fn("Invoices.markPaid")(function*(tenant, id, input) {
      const paymentDate = input.payment_date ?? (yield* context.today(tenant))
      // The balance is read under the invoice's lock, so a payment arriving meanwhile cannot make it overpaid.
      return yield* tx.withTransaction(Effect.gen(function*() {
        const invoice = yield* context.locked(tenant, id)
        yield* acceptingMoney(invoice)
        const { remaining_minor } = balanceOf(invoice)
        if (remaining_minor === 0) {
          return yield* new Unprocessable({ errorCode: "invoice_has_no_balance", reason: "Nothing remains to be paid on this invoice" })
        }
        return yield* recordPayment(tenant, id, {
          amount: formatMinor(remaining_minor, invoice.currency),
          payment_date: paymentDate,
          method: input.method ?? "OTHER",
          reference: input.reference ?? "",
          source: "mark_paid"
        })
      }))
    }),
    listPayments: (tenant, id) =>
      Effect.flatMap(find(tenant, id), (invoice) =>
        Effect.map(payments.listPayments(tenant, invoice.id), (rows) => rows.map((p) => presentPayment(p, invoice.currency)))),
    reversePayment: Effect.fn("Invoices.reversePayment")(function*(tenant, id, paymentId, input) {
      return yield* tx.withTransaction(Effect.gen(function*() {
        const invoice = yield* context.locked(tenant, id)
        const payment = yield* findPayment(tenant, invoice.id, paymentId)
        if (payment.reversal_id !== null) return yield* new Conflict({ reason: "This payment is already reversed" })
        if (payment.amount_minor > invoice.paid_minor) {
          return yield* new Conflict({ reason: "Refunds already returned part of this money; the payment cannot be reversed" })
        }
        const at = yield* now
        const reversal: ReversalRecord = {
          id: yield* newId(ids, ReversalId),
          invoice_id: invoice.id,
          reverses_payment_id: payment.id,
          amount_minor: payment.amount_minor,
          reason: input.reason ?? null,
          reversed_at: at
        }
        const next = withBalance(invoice, { paid_minor: invoice.paid_minor - payment.amount_minor }, at)
        yield* payments.insertReversal(tenant, reversal)
        yield* payments.updatePayment(tenant, { ...payment, reversal_id: reversal.id })
        yield* invoices.update(tenant, next).pipe(Effect.orDie)
        yield* outbox.publish(tenant, reversalEvent(next, reversal))
        return presentReversal(reversal, invoice.currency)
      }))
    }),
    refund: Effect.fn("Invoices.refund")(function*(tenant, id, input) {
      return yield* tx.withTransaction(Effect.gen(function*() {
        const invoice = yield* context.locked(tenant, id)
        yield* acceptingMoney(invoice)
        const amount = yield* amountIn(input.amount, invoice.currency)
        const { refund_due_minor } = balanceOf(invoice)
        if (amount > refund_due_minor) {
          return yield* new Unprocessable({
            errorCode: "refund_exceeds_refund_due",
            reason: `A refund returns at most what was paid beyond the net total (refund_due: ${refund_due_minor} minor units)`
          })
        }
        const at = yield* now
        const refund: RefundRecord = {
          id: yield* newId(ids, RefundId),
          invoice_id: invoice.id,
          amount_minor: amount,
          refund_date: input.refund_date,
          method: input.method,
          reference: input.reference ?? "",
          created_at: at
        }
        // Refunds emit none of the payment events (spec), and leave the status as it is: only overpaid money goes back.
        yield* payments.insertRefund(tenant, refund)
        yield* invoices.update(tenant, withBalance(invoice, { paid_minor: invoice.paid_minor - amount }, at)).pipe(Effect.orDie)
        return presentRefund(refund, invoice.currency)
      }))
    }),
    listRefunds: (tenant, id) =>
      Effect.flatMap(find(tenant, id), (invoice) =>
        Effect.map(payments.listRefunds(tenant, invoice.id), (rows) => rows.map((r) => presentRefund(r, invoice.currency))))
  }
}
