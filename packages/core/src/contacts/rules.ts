import { normalizeCui } from "../shared/identifiers.ts"

/**
 * A VAT number as stored, or undefined when it is not valid. A Romanian one
 * (country RO) must be a CUI with a right control digit and is stored without
 * the `RO` prefix; a foreign one is accepted as given (spaces removed, upper
 * case), since its format is its own country's (decided: docs/decisions.md).
 */
export const normalizeVatNumber = (country: string, text: string): string | undefined => {
  if (country === "RO") return normalizeCui(text)
  const compact = text.replace(/\s+/g, "").toUpperCase()
  return /^[A-Z0-9+*.-]{2,30}$/.test(compact) ? compact : undefined
}

/** A contact we sell to. */
export const isCustomer = (kind: "customer" | "supplier" | "both"): boolean => kind !== "supplier"
