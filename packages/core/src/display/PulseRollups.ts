import { Context, Effect, Layer } from "effect"
import { COMPACT_BATCH, PulseRepo } from "./PulseRepo.ts"

export interface CompactionSummary {
  /** Deltas folded into their days by this pass. */
  readonly folded: number
}

/**
 * The pulse job: folds the deltas that changes to invoices, payments and
 * expenses append into the daily rows the money figures read (migration 0012),
 * in batches until none is left. Figures are exact whether it has run or not;
 * it keeps them cheap. Each batch claims its deltas with `FOR UPDATE SKIP
 * LOCKED` and folds them in the same statement, so any number of processes
 * may run it at once.
 */
export class PulseRollups extends Context.Service<PulseRollups, {
  readonly compact: Effect.Effect<CompactionSummary>
}>()("@opsplatform/core/display/PulseRollups") {
  static readonly layer: Layer.Layer<PulseRollups, never, PulseRepo> = Layer.effect(
    PulseRollups,
    Effect.map(PulseRepo, (repo) =>
      PulseRollups.of({
        compact: Effect.gen(function*() {
          let folded = 0
          for (;;) {
            const moved = yield* repo.compact(COMPACT_BATCH)
            folded += moved
            if (moved < COMPACT_BATCH) return { folded }
          }
        }).pipe(Effect.withSpan("PulseRollups.compact"))
      }))
  )
}
