/**
 * Romanian identifiers (docs/decisions.md, "Design: shared by the areas").
 *
 * A CUI/CIF (fiscal code) is 2 to 10 digits whose last digit is a control
 * digit: the digits before it, left-padded to 9, weighted 7,5,3,2,1,7,5,3,2;
 * the weighted sum × 10 mod 11, with 10 read as 0. It is written with or
 * without the `RO` prefix of VAT payers and stored without it.
 */

const weights = [7, 5, 3, 2, 1, 7, 5, 3, 2] as const

/** The control digit of a CUI's leading digits (1 to 9 of them). */
export const cuiControlDigit = (body: string): number => {
  const padded = body.padStart(9, "0")
  let sum = 0
  for (let i = 0; i < 9; i++) sum += Number(padded[i]) * weights[i]!
  const control = (sum * 10) % 11
  return control === 10 ? 0 : control
}

/**
 * The CUI as stored (digits only, no leading zeros, no `RO`), or undefined
 * when the text is not a valid CUI. Spaces are ignored and the prefix may be
 * in either case: "RO 1859", "ro1859" and "1859" are the same code.
 */
export const normalizeCui = (text: string): string | undefined => {
  const compact = text.replace(/\s+/g, "").toUpperCase()
  const digits = compact.startsWith("RO") ? compact.slice(2) : compact
  if (!/^[1-9]\d{1,9}$/.test(digits)) return undefined
  return cuiControlDigit(digits.slice(0, -1)) === Number(digits.at(-1)) ? digits : undefined
}

/** What a field holding a CUI that `normalizeCui` refuses is told. */
export const invalidCuiIssue = "is not a valid Romanian CUI/CIF (2 to 10 digits, optionally after RO, with a valid control digit)"
