import { invalidCuiIssue, normalizeCui } from "../shared/identifiers.ts"

/**
 * A VAT number as stored, or undefined when it is not valid. A Romanian one
 * (country RO) must be a CUI with a right control digit and is stored without
 * the `RO` prefix; a foreign one is accepted as given (spaces removed, upper
 * case), since its format is its own country's (decided: docs/decisions.md).
 */
export const normalizeVatNumber = (country: string, text: string): string | undefined => {
  if (country === "RO") return normalizeCui(text)
  const compact = compactVatNumber(text)
  return /^[A-Z0-9+*.-]{2,30}$/.test(compact) ? compact : undefined
}

/** What a VAT number `normalizeVatNumber` refuses for `country` is told. */
export const vatNumberIssue = (country: string): string =>
  country === "RO" ? invalidCuiIssue : "must be 2 to 30 letters and digits"

/** A VAT number without spaces, upper case. */
const compactVatNumber = (text: string): string => text.replace(/\s+/g, "").toUpperCase()

/**
 * The stored form of a VAT number searched for, however it was written: a
 * valid Romanian CUI without its `RO` ("RO 1859" finds 1859), anything else
 * compact and upper case.
 */
export const searchedVatNumber = (text: string): string => normalizeVatNumber("RO", text) ?? compactVatNumber(text)
