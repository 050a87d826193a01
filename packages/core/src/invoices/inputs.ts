import { Effect } from "effect"
import { ValidationFailed } from "../shared/errors.ts"
import { parseMinor } from "../shared/money.ts"
import type { InvoiceLineInput, StoredLine } from "./model.ts"
import { priceLines } from "./rules.ts"

/** The caller's amounts and lines, checked by the rules and refused with the field that fails. */

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
