import { formatMinor } from "../shared/money.ts"
import type {
  BankTransaction,
  BankTransactionRecord,
  CreditNote,
  CreditNoteRecord,
  Invoice,
  InvoiceRecord,
  Payment,
  PaymentRecord,
  Refund,
  RefundRecord,
  Reversal,
  ReversalRecord
} from "./model.ts"
import { balanceOf, presentLine } from "./rules.ts"

/** Stored records as the API shows them: minor units become decimal strings in the currency's exponent. */

export const presentInvoice = (record: InvoiceRecord): Invoice => {
  const { credited_minor, lines, paid_minor, subtotal_minor, total_minor, vat_minor, ...fields } = record
  const money = (minor: number) => formatMinor(minor, record.currency)
  const balance = balanceOf(record)
  return {
    ...fields,
    lines: lines.map((line) => presentLine(line, record.currency)),
    subtotal: money(subtotal_minor),
    vat_total: money(vat_minor),
    total: money(total_minor),
    credited_amount: money(credited_minor),
    paid_amount: money(paid_minor),
    remaining_amount: money(balance.remaining_minor),
    refund_due: money(balance.refund_due_minor)
  }
}

export const presentPayment = (record: PaymentRecord, currency: string): Payment => {
  const { amount_minor, ...fields } = record
  return { ...fields, amount: formatMinor(amount_minor, currency), currency }
}

export const presentReversal = (record: ReversalRecord, currency: string): Reversal => {
  const { amount_minor, ...fields } = record
  return { ...fields, amount: formatMinor(amount_minor, currency) }
}

export const presentRefund = (record: RefundRecord, currency: string): Refund => {
  const { amount_minor, ...fields } = record
  return { ...fields, amount: formatMinor(amount_minor, currency) }
}

export const presentCreditNote = (record: CreditNoteRecord): CreditNote => {
  const { amount_minor, lines, ...fields } = record
  return {
    ...fields,
    lines: lines === null ? null : lines.map((line) => presentLine(line, record.currency)),
    amount: formatMinor(amount_minor, record.currency)
  }
}

export const presentBankTransaction = (record: BankTransactionRecord): BankTransaction => {
  const { amount_minor, ...fields } = record
  return { ...fields, amount: formatMinor(amount_minor, record.currency) }
}
