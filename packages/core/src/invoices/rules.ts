import { currencyExponent, divideHalfAwayFromZero, formatMinor, maxMinor, parseDecimal } from "../shared/money.ts"
import { transitionTable } from "../shared/transitions.ts"
import {
  type InvoiceLine,
  type InvoiceLineInput,
  type InvoiceRecord,
  InvoiceStatus,
  type StoredLine
} from "./model.ts"

/**
 * Invoice arithmetic, in integer minor units. One rounding rule, applied once
 * per amount: **half away from zero** ("commercial" rounding, 0.005 → 0.01),
 * to the currency's minor unit. A line's net is quantity × unit price rounded
 * once; its VAT is that rounded net × rate rounded once; the invoice's
 * amounts are sums of its lines' rounded amounts, so the lines always add up
 * to the totals (decided: docs/decisions.md).
 */

/** The currency's minor units per unit, as a bigint. */
const minorPerUnit = (currency: string): bigint => 10n ** BigInt(currencyExponent(currency))

const pow10 = (n: number): bigint => 10n ** BigInt(n)

/** A VAT rate in percent as basis points (21 → 2100, 5.5 → 550). */
export const rateBasisPoints = (rate: number): bigint => BigInt(Math.round(rate * 100))

/** The line with its amounts, or undefined when its total is beyond the largest amount (`maxMinor`). */
export const lineAmounts = (line: InvoiceLineInput, currency: string): StoredLine | undefined => {
  const quantity = parseDecimal(line.quantity, 3)
  const price = parseDecimal(line.unit_price, 4)
  if (quantity === undefined || price === undefined) return undefined
  const net = divideHalfAwayFromZero(
    quantity.units * price.units * minorPerUnit(currency),
    pow10(quantity.scale + price.scale)
  )
  const vat = divideHalfAwayFromZero(net * rateBasisPoints(line.vat_rate), 10_000n)
  if (net + vat > BigInt(maxMinor(currency))) return undefined
  return { ...line, net_minor: Number(net), vat_minor: Number(vat), total_minor: Number(net + vat) }
}

/**
 * Every line priced, or the first problem as a validation detail: a line, or
 * the sum of them all, beyond the largest amount (12 integer digits).
 */
export const priceLines = (
  lines: ReadonlyArray<InvoiceLineInput>,
  currency: string,
  field = "lines"
): { readonly lines: ReadonlyArray<StoredLine> } | { readonly field: string; readonly issue: string } => {
  const priced: Array<StoredLine> = []
  for (const [i, line] of lines.entries()) {
    const amounts = lineAmounts(line, currency)
    if (amounts === undefined) return { field: `${field}.${i}`, issue: `its total exceeds ${formatMinor(maxMinor(currency), currency)}` }
    priced.push(amounts)
  }
  return totalsOf(priced).total_minor > maxMinor(currency)
    ? { field, issue: `the total exceeds ${formatMinor(maxMinor(currency), currency)}` }
    : { lines: priced }
}

export interface Totals {
  readonly subtotal_minor: number
  readonly vat_minor: number
  readonly total_minor: number
}

export const totalsOf = (lines: ReadonlyArray<StoredLine>): Totals => {
  let subtotal = 0
  let vat = 0
  for (const line of lines) {
    subtotal += line.net_minor
    vat += line.vat_minor
  }
  return { subtotal_minor: subtotal, vat_minor: vat, total_minor: subtotal + vat }
}

export interface Balance {
  /** total − credited − paid, never negative. */
  readonly remaining_minor: number
  /** What was paid beyond the net total (total − credited), else 0. */
  readonly refund_due_minor: number
}

export const balanceOf = (invoice: Pick<InvoiceRecord, "total_minor" | "credited_minor" | "paid_minor">): Balance => {
  const net = invoice.total_minor - invoice.credited_minor
  return {
    remaining_minor: Math.max(0, net - invoice.paid_minor),
    refund_due_minor: Math.max(0, invoice.paid_minor - net)
  }
}

/**
 * The status an issued invoice's balance gives it (the spec's state table):
 * fully credited → CREDITED; nothing left to pay → PAID; some paid →
 * PARTIALLY_PAID; else SENT. Drafts and void invoices keep their status.
 */
export const invoiceStatus = (
  invoice: Pick<InvoiceRecord, "status" | "total_minor" | "credited_minor" | "paid_minor">
): InvoiceStatus => {
  if (invoice.status === "DRAFT" || invoice.status === "VOID") return invoice.status
  if (invoice.credited_minor >= invoice.total_minor) return "CREDITED"
  if (balanceOf(invoice).remaining_minor === 0) return "PAID"
  return invoice.paid_minor > 0 ? "PARTIALLY_PAID" : "SENT"
}

/**
 * The moves a caller asks for. Payments, credit notes and reversals do not
 * appear: after them the status is recomputed from the balance.
 */
export const invoiceLifecycle = transitionTable(InvoiceStatus.literals, {
  issue: { from: ["DRAFT"], to: "SENT" },
  void: { from: ["SENT"], to: "VOID" }
})

/** Money can be recorded against an issued invoice only (not a draft, not a void one). */
export const acceptsMoney = (status: InvoiceStatus): boolean => status !== "DRAFT" && status !== "VOID"

/**
 * The invoice after its balance changed: the status recomputed from the
 * balance, and `paid_at` set when it becomes settled and cleared when a
 * balance opens again.
 */
export const withBalance = (
  invoice: InvoiceRecord,
  change: Partial<Pick<InvoiceRecord, "paid_minor" | "credited_minor">>,
  at: string
): InvoiceRecord => {
  const next = { ...invoice, ...change, updated_at: at }
  const status = invoiceStatus(next)
  return { ...next, status, paid_at: status === "PAID" ? (invoice.status === "PAID" ? invoice.paid_at : at) : null }
}

export const presentLine = (line: StoredLine, currency: string): InvoiceLine => {
  const { net_minor, total_minor, vat_minor, ...given } = line
  return {
    ...given,
    net_amount: formatMinor(net_minor, currency),
    vat_amount: formatMinor(vat_minor, currency),
    total: formatMinor(total_minor, currency)
  }
}

/** `SERIES-000042`: the series and its number, at least six digits. Credit notes take numbers of their invoice's series. */
export const formatInvoiceNumber = (series: string, n: number): string => `${series}-${String(n).padStart(6, "0")}`
