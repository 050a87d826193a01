import { Schema, Struct } from "effect"
import { ContactId } from "../contacts/model.ts"
import { PaymentSource } from "../events/catalog.ts"
import { Filters, QueryBoolean } from "../shared/filters.ts"
import { CurrencyCode, isMaxChars, IsoDate, IsoDateTime, isPattern, NonBlankString, Uuid } from "../shared/schemas.ts"

export const InvoiceId = Uuid.pipe(Schema.brand("InvoiceId"))
export type InvoiceId = typeof InvoiceId.Type
export const PaymentId = Uuid.pipe(Schema.brand("PaymentId"))
export type PaymentId = typeof PaymentId.Type
export const ReversalId = Uuid.pipe(Schema.brand("ReversalId"))
export type ReversalId = typeof ReversalId.Type
export const RefundId = Uuid.pipe(Schema.brand("RefundId"))
export type RefundId = typeof RefundId.Type
export const CreditNoteId = Uuid.pipe(Schema.brand("CreditNoteId"))
export type CreditNoteId = typeof CreditNoteId.Type
export const BankTransactionId = Uuid.pipe(Schema.brand("BankTransactionId"))
export type BankTransactionId = typeof BankTransactionId.Type

export { PaymentSource }

/**
 * DRAFT until issued; SENT once issued with nothing paid; then derived from
 * the balance (rules.ts `invoiceStatus`): PARTIALLY_PAID, PAID, CREDITED when
 * credit notes reverse it in full; VOID when withdrawn before any money or
 * credit touched it.
 */
export const InvoiceStatus = Schema.Literals(["DRAFT", "SENT", "PARTIALLY_PAID", "PAID", "CREDITED", "VOID"])
export type InvoiceStatus = typeof InvoiceStatus.Type

export const PaymentMethod = Schema.Literals(["BANK_TRANSFER", "CARD", "CASH", "BILL_OF_EXCHANGE", "OTHER"])
export type PaymentMethod = typeof PaymentMethod.Type

/** A money amount in the invoice's currency: a decimal string in the currency's exponent, e.g. "1250.00". */
export const Money = Schema.String.annotate({
  description: "Decimal string in the currency's exponent, e.g. \"1250.00\"",
  examples: ["1250.00"]
})

/** An amount a caller sends: positive, at most the currency's decimals (checked against it), at most 12 integer digits. */
export const AmountInput = Schema.String.check(
  isPattern(/^(0|[1-9]\d{0,11})(\.\d{1,3})?$/, { message: "must be a decimal string such as \"1250.00\"" })
).annotate({ description: "Decimal string, at most the currency's decimals", examples: ["1250.00"] })

export const Quantity = Schema.String.check(
  isPattern(/^(0|[1-9]\d{0,8})(\.\d{1,3})?$/, {
    message: "must be a decimal string with at most 3 decimals and 9 integer digits, e.g. \"2.5\""
  }),
  Schema.makeFilter((s: string) => Number(s) > 0 || "must be greater than zero")
).annotate({ examples: ["1", "2.5"] })

export const UnitPrice = Schema.String.check(
  isPattern(/^(0|[1-9]\d{0,11})(\.\d{1,4})?$/, {
    message: "must be a decimal string with at most 4 decimals and 12 integer digits, e.g. \"125.50\""
  })
).annotate({ description: "Price of one unit, before VAT", examples: ["125.50"] })

export const VatRate = Schema.Number.check(
  Schema.isBetween({ minimum: 0, maximum: 100 }),
  Schema.makeFilter((n: number) => Number.isInteger(Math.round(n * 100)) && Math.abs(n * 100 - Math.round(n * 100)) < 1e-9 || "must have at most 2 decimals")
).annotate({ description: "VAT rate in percent, e.g. 21", examples: [21, 11, 0] })

/** An exchange rate: RON for one unit of the invoice's currency, up to 6 decimals. */
export const ExchangeRate = Schema.String.check(
  isPattern(/^(0|[1-9]\d{0,5})(\.\d{1,6})?$/, { message: "must be a decimal string such as \"4.9763\"" }),
  Schema.makeFilter((s: string) => Number(s) > 0 || "must be greater than zero")
).annotate({ description: "RON for one unit of the currency, fixed at issue", examples: ["4.9763"] })

/** Invoice series: 1 to 10 upper-case letters or digits. */
export const Series = Schema.String.check(
  isPattern(/^[A-Z0-9]{1,10}$/, { message: "must be 1 to 10 upper-case letters or digits, e.g. FCT" })
).annotate({ examples: ["FCT"] })

export const InvoiceLineInput = Schema.Struct({
  description: NonBlankString(500),
  quantity: Quantity,
  unit_price: UnitPrice,
  vat_rate: VatRate
}).annotate({ identifier: "InvoiceLineInput" })
export type InvoiceLineInput = typeof InvoiceLineInput.Type

/** A line as stored: what was given, and its amounts in minor units, each rounded once (rules.ts `lineAmounts`). */
export const StoredLine = InvoiceLineInput.mapFields(Struct.assign({
  net_minor: Schema.Int,
  vat_minor: Schema.Int,
  total_minor: Schema.Int
}))
export type StoredLine = typeof StoredLine.Type

export const InvoiceLine = InvoiceLineInput.mapFields(Struct.assign({
  net_amount: Money,
  vat_amount: Money,
  total: Money
})).annotate({ identifier: "InvoiceLine" })
export type InvoiceLine = typeof InvoiceLine.Type

/** The fields an invoice shows as stored; the amounts differ only in form (minor units stored, decimal strings shown). */
const invoiceFields = {
  id: InvoiceId,
  series: Schema.NullOr(Schema.String),
  number: Schema.NullOr(Schema.String).annotate({ description: "Set at issue: the series and its next number, e.g. FCT-000042" }),
  status: InvoiceStatus,
  contact_id: ContactId,
  currency: CurrencyCode,
  issue_date: Schema.NullOr(IsoDate),
  due_date: Schema.NullOr(IsoDate),
  exchange_rate_ron: Schema.NullOr(ExchangeRate),
  notes: Schema.NullOr(Schema.String.check(isMaxChars(2000))),
  issued_at: Schema.NullOr(IsoDateTime),
  voided_at: Schema.NullOr(IsoDateTime),
  paid_at: Schema.NullOr(IsoDateTime).annotate({ description: "When it was settled in full; null while a balance remains" }),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
}

/**
 * An invoice as stored. `paid_minor` is what the customer has paid and we
 * keep: payments, less reversed payments, less refunds.
 */
export const InvoiceRecord = Schema.Struct({
  ...invoiceFields,
  lines: Schema.Array(StoredLine),
  subtotal_minor: Schema.Int,
  vat_minor: Schema.Int,
  total_minor: Schema.Int,
  credited_minor: Schema.Int,
  paid_minor: Schema.Int
})
export type InvoiceRecord = typeof InvoiceRecord.Type

export const Invoice = Schema.Struct({
  ...invoiceFields,
  lines: Schema.Array(InvoiceLine),
  subtotal: Money,
  vat_total: Money,
  total: Money,
  credited_amount: Money.annotate({ description: "Sum of the issued credit notes reversing the invoice" }),
  paid_amount: Money.annotate({ description: "Paid and kept: payments less reversals and refunds" }),
  remaining_amount: Money.annotate({ description: "total − credited_amount − paid_amount, never negative" }),
  refund_due: Money.annotate({ description: "What was paid beyond the net total (total − credited_amount), else 0" })
}).annotate({ identifier: "Invoice" })
export type Invoice = typeof Invoice.Type

const InvoiceEditable = Schema.Struct({
  contact_id: Uuid,
  currency: CurrencyCode,
  issue_date: Schema.NullOr(IsoDate),
  due_date: Schema.NullOr(IsoDate),
  exchange_rate_ron: Schema.NullOr(ExchangeRate),
  notes: Schema.NullOr(Schema.String.check(isMaxChars(2000))),
  lines: Schema.Array(InvoiceLineInput).check(Schema.isMaxLength(500))
})

/** A draft: the contact and the currency are required; lines, dates and notes may follow. */
export const InvoiceCreate = InvoiceEditable.mapFields(Struct.mapOmit(["contact_id", "currency"], Schema.optionalKey)).annotate({
  identifier: "InvoiceCreate"
})
export type InvoiceCreate = typeof InvoiceCreate.Type

/** Only a draft changes; `lines`, when sent, replaces them all. */
export const InvoiceUpdate = InvoiceEditable.mapFields(Struct.map(Schema.optionalKey)).annotate({ identifier: "InvoiceUpdate" })
export type InvoiceUpdate = typeof InvoiceUpdate.Type

export const InvoiceIssue = Schema.Struct({
  series: Series,
  issue_date: Schema.optionalKey(IsoDate),
  due_date: Schema.optionalKey(IsoDate),
  exchange_rate_ron: Schema.optionalKey(ExchangeRate)
}).annotate({ identifier: "InvoiceIssue" })
export type InvoiceIssue = typeof InvoiceIssue.Type

export const InvoiceFilter = Schema.Struct({
  status: Schema.optionalKey(InvoiceStatus),
  contact_id: Schema.optionalKey(Uuid),
  issue_date_from: Schema.optionalKey(IsoDate.annotate({ description: "issue_date on or after" }).pipe(Filters.from("issue_date"))),
  issue_date_to: Schema.optionalKey(IsoDate.annotate({ description: "issue_date on or before" }).pipe(Filters.to("issue_date"))),
  overdue: Schema.optionalKey(QueryBoolean.annotate({
    description: "true: issued, not settled, due before today in the organization's time zone"
  }).pipe(Filters.own))
})
export type InvoiceFilter = typeof InvoiceFilter.Type

// ---- Payments, reversals, refunds --------------------------------------------

export const PaymentRecord = Schema.Struct({
  id: PaymentId,
  invoice_id: InvoiceId,
  amount_minor: Schema.Int,
  payment_date: IsoDate,
  method: PaymentMethod,
  reference: Schema.String,
  source: PaymentSource,
  reversal_id: Schema.NullOr(ReversalId),
  created_at: IsoDateTime
})
export type PaymentRecord = typeof PaymentRecord.Type

export const Payment = PaymentRecord.mapFields(Struct.omit(["amount_minor"])).mapFields(Struct.assign({
  amount: Money,
  currency: CurrencyCode
})).annotate({ identifier: "InvoicePayment" })
export type Payment = typeof Payment.Type

const Reference = Schema.String.check(isMaxChars(140))

export const PaymentCreate = Schema.Struct({
  amount: AmountInput,
  payment_date: IsoDate,
  method: PaymentMethod,
  reference: Schema.optionalKey(Reference)
}).annotate({ identifier: "InvoicePaymentCreate" })
export type PaymentCreate = typeof PaymentCreate.Type

/** What `recordPayment` takes from any path: the API's fields and the path the money came by. */
export interface PaymentInput {
  /** A decimal string in the invoice's currency, e.g. "250.00". */
  readonly amount: string
  readonly payment_date: string
  readonly method: PaymentMethod
  readonly reference?: string | undefined
  readonly source: PaymentSource
}

export const ReversalRecord = Schema.Struct({
  id: ReversalId,
  invoice_id: InvoiceId,
  reverses_payment_id: PaymentId,
  amount_minor: Schema.Int,
  reason: Schema.NullOr(Schema.String),
  reversed_at: IsoDateTime
})
export type ReversalRecord = typeof ReversalRecord.Type

export const Reversal = ReversalRecord.mapFields(Struct.omit(["amount_minor"])).mapFields(Struct.assign({
  amount: Money
})).annotate({ identifier: "InvoicePaymentReversal" })
export type Reversal = typeof Reversal.Type

export const ReversalCreate = Schema.Struct({
  reason: Schema.optionalKey(Schema.String.check(isMaxChars(500)))
}).annotate({ identifier: "InvoicePaymentReversalCreate" })
export type ReversalCreate = typeof ReversalCreate.Type

export const RefundRecord = Schema.Struct({
  id: RefundId,
  invoice_id: InvoiceId,
  amount_minor: Schema.Int,
  refund_date: IsoDate,
  method: PaymentMethod,
  reference: Schema.String,
  created_at: IsoDateTime
})
export type RefundRecord = typeof RefundRecord.Type

export const Refund = RefundRecord.mapFields(Struct.omit(["amount_minor"])).mapFields(Struct.assign({
  amount: Money
})).annotate({ identifier: "InvoiceRefund" })
export type Refund = typeof Refund.Type

export const RefundCreate = PaymentCreate.mapFields(Struct.renameKeys({ payment_date: "refund_date" })).annotate({
  identifier: "InvoiceRefundCreate"
})
export type RefundCreate = typeof RefundCreate.Type

// ---- Credit notes -------------------------------------------------------------

export const CreditNoteStatus = Schema.Literals(["issued", "cancelled"])
export type CreditNoteStatus = typeof CreditNoteStatus.Type

export const CreditNoteRecord = Schema.Struct({
  id: CreditNoteId,
  invoice_id: InvoiceId,
  number: Schema.String,
  status: CreditNoteStatus,
  currency: CurrencyCode,
  reason: Schema.String,
  lines: Schema.NullOr(Schema.Array(StoredLine)),
  amount_minor: Schema.Int,
  issued_at: IsoDateTime,
  cancelled_at: Schema.NullOr(IsoDateTime),
  created_at: IsoDateTime,
  updated_at: IsoDateTime
})
export type CreditNoteRecord = typeof CreditNoteRecord.Type

export const CreditNote = CreditNoteRecord.mapFields(Struct.omit(["amount_minor", "lines"])).mapFields(Struct.assign({
  lines: Schema.NullOr(Schema.Array(InvoiceLine)),
  amount: Money
})).annotate({ identifier: "CreditNote" })
export type CreditNote = typeof CreditNote.Type

/** Exactly one of `amount` (VAT included) or `lines` (amounts computed like an invoice's). */
export const CreditNoteCreate = Schema.Struct({
  reason: NonBlankString(500),
  amount: Schema.optionalKey(AmountInput),
  lines: Schema.optionalKey(Schema.Array(InvoiceLineInput).check(Schema.isMinLength(1), Schema.isMaxLength(500)))
}).annotate({ identifier: "CreditNoteCreate" })
export type CreditNoteCreate = typeof CreditNoteCreate.Type

export const CreditNoteFilter = Schema.Struct({
  invoice_id: Schema.optionalKey(Uuid),
  status: Schema.optionalKey(CreditNoteStatus)
})
export type CreditNoteFilter = typeof CreditNoteFilter.Type

// ---- Bank transactions --------------------------------------------------------

export const BankTransactionRecord = Schema.Struct({
  id: BankTransactionId,
  booking_date: IsoDate,
  amount_minor: Schema.Int,
  currency: CurrencyCode,
  description: Schema.String,
  reference: Schema.String,
  counterparty_name: Schema.NullOr(Schema.String),
  counterparty_iban: Schema.NullOr(Schema.String),
  matched_invoice_id: Schema.NullOr(InvoiceId),
  matched_payment_id: Schema.NullOr(PaymentId),
  created_at: IsoDateTime
})
export type BankTransactionRecord = typeof BankTransactionRecord.Type

export const BankTransaction = BankTransactionRecord.mapFields(Struct.omit(["amount_minor"])).mapFields(Struct.assign({
  amount: Money
})).annotate({ identifier: "BankTransaction" })
export type BankTransaction = typeof BankTransaction.Type

export const BankTransactionLine = Schema.Struct({
  booking_date: IsoDate,
  amount: AmountInput,
  currency: CurrencyCode,
  description: Schema.optionalKey(Schema.String.check(isMaxChars(500))),
  reference: Schema.optionalKey(Reference),
  counterparty_name: Schema.optionalKey(Schema.NullOr(Schema.String.check(isMaxChars(200)))),
  counterparty_iban: Schema.optionalKey(Schema.NullOr(Schema.String.check(
    isPattern(/^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/, { message: "must be an IBAN without spaces" })
  )))
}).annotate({ identifier: "BankTransactionLine" })
export type BankTransactionLine = typeof BankTransactionLine.Type

/** Incoming money only: a statement's credits, up to 1000 lines a request. */
export const BankTransactionImport = Schema.Struct({
  lines: Schema.Array(BankTransactionLine).check(Schema.isMinLength(1), Schema.isMaxLength(1000))
}).annotate({ identifier: "BankTransactionImport" })
export type BankTransactionImport = typeof BankTransactionImport.Type

export const BankTransactionMatch = Schema.Struct({ invoice_id: Uuid }).annotate({ identifier: "BankTransactionMatch" })
export type BankTransactionMatch = typeof BankTransactionMatch.Type

export const BankTransactionFilter = Schema.Struct({
  matched: Schema.optionalKey(QueryBoolean.pipe(Filters.present("matched_payment_id")))
})
export type BankTransactionFilter = typeof BankTransactionFilter.Type
