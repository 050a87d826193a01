import { Context, Effect, Schema } from "effect"
import type { RegistryAnswer } from "./anaf.ts"

export type { RegistryAnswer } from "./anaf.ts"

/**
 * The registry could not answer (down, 5xx after the retries, timed out,
 * refused the request, or answered something that is not its format).
 * Nothing is concluded about any CUI of the request: no change, no event.
 */
export class RegistryUnavailable extends Schema.TaggedError<RegistryUnavailable>()("RegistryUnavailable", {
  reason: Schema.String
}) {
  override get message() {
    return `The fiscal registry did not answer: ${this.reason}`
  }
}

export interface FiscalRegistryShape {
  /**
   * The status of each CUI (digits, no `RO`) as of `date` (YYYY-MM-DD). A
   * CUI the registry does not know is in `notFound`; one in neither list is
   * unknown as well.
   */
  readonly lookup: (cuis: ReadonlyArray<string>, date: string) => Effect.Effect<RegistryAnswer, RegistryUnavailable>
}

/** No registry configured: every lookup fails, so checks find nothing and send nothing. */
export const unconfiguredRegistry: FiscalRegistryShape = {
  lookup: () => Effect.fail(new RegistryUnavailable({ reason: "no fiscal registry is configured" }))
}

/**
 * Where fiscal statuses come from. Without a layer of its own nothing
 * answers; `AnafRegistry.layer` asks the Romanian tax authority (ANAF
 * `PlatitorTvaRest` v9), and tests provide a fake server's address.
 */
export class FiscalRegistry extends Context.Reference<FiscalRegistryShape>("@opsplatform/core/fiscal/FiscalRegistry", {
  defaultValue: () => unconfiguredRegistry
}) {}
