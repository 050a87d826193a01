import type { FiscalStatus } from "../contacts/model.ts"
import { type FiscalChange, FiscalChangeKind } from "../events/catalog.ts"
import { currencyExponent, divideHalfAwayFromZero, formatMinor, parseDecimal, toSafeInteger } from "../shared/money.ts"
import type { OpenInvoice } from "./model.ts"

/**
 * The fiscal check's rules, pure: what changed between two statuses of a
 * contact, in which order, and what its open invoices amount to in RON
 * (decided: docs/decisions.md, "Fiscal status").
 */

type Fact = Exclude<keyof FiscalStatus, "cui">

/**
 * Each fact of a status and the kind its flip is reported as: [becoming true,
 * becoming false]. Leaving the struck-off or insolvency state has no kind in
 * the spec, so it is recorded in the history and sent to nobody.
 */
export const factKinds: ReadonlyArray<readonly [Fact, FiscalChangeKind, FiscalChangeKind | undefined]> = [
  ["inactive", "became_inactive", "reactivated"],
  ["struck_off", "struck_off", undefined],
  ["insolvency", "insolvency", undefined],
  ["vat_registered", "vat_registered", "vat_deregistered"],
  ["cash_vat", "cash_vat_on", "cash_vat_off"]
]

const kindRank = new Map(FiscalChangeKind.literals.map((kind, i) => [kind, i]))

/**
 * The order of `changes`: by effective date, a change without one dated by
 * the check that found it; on the same date, in the catalog's order of kinds.
 */
export const orderChanges = (changes: ReadonlyArray<FiscalChange>, checkDate: string): Array<FiscalChange> =>
  [...changes].sort((a, b) => {
    const da = a.effective_date ?? checkDate
    const db = b.effective_date ?? checkDate
    return da === db ? kindRank.get(a.kind)! - kindRank.get(b.kind)! : da < db ? -1 : 1
  })

/** What changed from `previous` to `next`, ordered; a fact whose status stayed the same is no change. */
export const fiscalChanges = (previous: FiscalStatus, next: FiscalStatus, checkDate: string): Array<FiscalChange> => {
  const changes: Array<FiscalChange> = []
  for (const [fact, on, off] of factKinds) {
    const after = next[fact]
    if (previous[fact].status === after.status) continue
    const kind = after.status ? on : off
    if (kind === undefined) continue
    changes.push(after.effective_date === null ? { kind } : { kind, effective_date: after.effective_date })
  }
  return orderChanges(changes, checkDate)
}

/** The date in the event id: the first change's effective date, or the check date when none is published. */
export const eventDate = (first: FiscalChange, checkDate: string): string => first.effective_date ?? checkDate

/** Whether two statuses say the same thing (the same CUI, every fact and date equal). */
export const sameStatus = (a: FiscalStatus, b: FiscalStatus): boolean =>
  a.cui === b.cui &&
  factKinds.every(([fact]) => a[fact].status === b[fact].status && a[fact].effective_date === b[fact].effective_date)

const ronExponent = BigInt(currencyExponent("RON"))

/**
 * An open invoice's balance in RON minor units: as it is for RON, else at the
 * invoice's own `exchange_rate_ron`, rounded once, half away from zero (the
 * invoices' rule). Issuing refuses a foreign invoice without a rate, so one
 * here is a broken invariant.
 */
export const ronMinor = (invoice: OpenInvoice): number => {
  if (invoice.currency === "RON") return invoice.remaining_minor
  const rate = invoice.exchange_rate_ron === null ? undefined : parseDecimal(invoice.exchange_rate_ron, 6)
  if (rate === undefined) {
    throw new RangeError(`An issued ${invoice.currency} invoice has no usable exchange_rate_ron (${invoice.exchange_rate_ron})`)
  }
  const numerator = BigInt(invoice.remaining_minor) * rate.units * 10n ** ronExponent
  const denominator = 10n ** BigInt(currencyExponent(invoice.currency) + rate.scale)
  return toSafeInteger(divideHalfAwayFromZero(numerator, denominator))
}

/** `open_invoices` of the event: how many, and their balance in RON as a decimal string. */
export const openInvoicesSummary = (invoices: ReadonlyArray<OpenInvoice>): { count: number; balance_ron: string } => {
  let total = 0n
  for (const invoice of invoices) total += BigInt(ronMinor(invoice))
  return { count: invoices.length, balance_ron: formatMinor(toSafeInteger(total), "RON") }
}
