import { Context, Effect, Layer, Semaphore } from "effect"
import { Transactor } from "@opsplatform/core/shared/Transactor"

/**
 * The in-memory database behind every memory repository: named tables of
 * rows, and transactions with real rollback (a snapshot of every table is
 * restored when the unit of work fails). Transactions run one at a time, as on
 * the embedded database.
 */
export class MemoryStore extends Context.Service<MemoryStore, {
  readonly table: <A>(name: string) => Map<string, A>
  readonly transactor: Transactor["Service"]
}>()("@opsplatform/testing/MemoryStore") {
  static readonly layer: Layer.Layer<MemoryStore> = Layer.effect(
    MemoryStore,
    Effect.gen(function*() {
      const tables = new Map<string, Map<string, unknown>>()
      const lock = yield* Semaphore.make(1)
      const table = <A>(name: string): Map<string, A> => {
        let t = tables.get(name)
        if (t === undefined) {
          t = new Map()
          tables.set(name, t)
        }
        return t as Map<string, A>
      }
      const snapshot = () => new Map([...tables].map(([name, rows]) => [name, new Map(rows)]))
      const restore = (saved: Map<string, Map<string, unknown>>) => {
        for (const [name, rows] of tables) {
          rows.clear()
          const before = saved.get(name)
          if (before) for (const [k, v] of before) rows.set(k, v)
        }
      }
      const withTransaction = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
        Effect.flatMap(InTransaction, (current) => {
          if (current !== undefined) return self
          const frame = { afterCommit: [] as Array<Effect.Effect<void>> }
          return lock.withPermits(1)(
            Effect.suspend(() => {
              const saved = snapshot()
              return self.pipe(
                Effect.provideService(InTransaction, frame),
                Effect.onExit((exit) => Effect.sync(() => exit._tag === "Failure" && restore(saved)))
              )
            })
          ).pipe(Effect.tap(() => Effect.forEach(frame.afterCommit, (e) => e, { discard: true })))
        })
      return MemoryStore.of({
        table,
        transactor: Transactor.of({
          withTransaction,
          afterCommit: (effect) =>
            Effect.flatMap(InTransaction, (frame) =>
              frame === undefined ? effect : Effect.sync(() => {
                frame.afterCommit.push(effect)
              }))
        })
      })
    })
  )

  static readonly transactor: Layer.Layer<Transactor, never, MemoryStore> = Layer.effect(
    Transactor,
    Effect.map(MemoryStore, (store) => store.transactor)
  )
}

const InTransaction = Context.Reference<{ afterCommit: Array<Effect.Effect<void>> } | undefined>(
  "@opsplatform/testing/MemoryStore/InTransaction",
  { defaultValue: () => undefined }
)
