import { Cause, Deferred, Effect, Exit, FiberSet, type Scope } from "effect"

/**
 * Group commit for a write that many callers make at once: each caller's
 * item waits only while every slot (`maxInFlight`) has a group under way, and
 * the items that gathered meanwhile go together as the next group — one
 * statement and one commit for up to `maxGroup` of them. A caller alone never
 * waits for company (no timer, no window): at low load every group is one
 * item. Each caller is answered once its own group has committed.
 *
 * A group that fails is run again an item at a time, so one item the
 * database refuses fails alone and the others are answered as if they had
 * gone by themselves (a failed statement rolled back; nothing of it stays).
 * Groups run in fibers of the scope that made the group commit, never in a
 * caller's: a caller inside a transaction must not use it (its write would
 * commit apart from the transaction) and runs `run` with its one item itself.
 * Decided: docs/decisions.md, "Usage metering".
 */
export interface GroupCommitOptions<I, O, E> {
  /** Writes a group, answering one result per item, in the items' order. */
  readonly run: (items: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<O>, E>
  /** Items in one group at most. */
  readonly maxGroup: number
  /** Groups under way at once at most (each holds a database connection while it runs). */
  readonly maxInFlight: number
}

interface Waiting<I, O, E> {
  readonly item: I
  readonly done: Deferred.Deferred<O, E>
}

export const makeGroupCommit = <I, O, E>(
  options: GroupCommitOptions<I, O, E>
): Effect.Effect<(item: I) => Effect.Effect<O, E>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const runFork = yield* FiberSet.makeRuntime<never>()
    const waiting: Array<Waiting<I, O, E>> = []
    let inFlight = 0
    let closed = false

    const complete = (group: ReadonlyArray<Waiting<I, O, E>>, exit: Exit.Exit<ReadonlyArray<O>, E>) => {
      const answered: Exit.Exit<ReadonlyArray<O>, E> = Exit.isSuccess(exit) && exit.value.length !== group.length
        ? Exit.die(new Error(`a group of ${group.length} was answered with ${exit.value.length} results`))
        : exit
      group.forEach((w, i) =>
        Deferred.doneUnsafe(w.done, Exit.isSuccess(answered) ? Exit.succeed(answered.value[i] as O) : Exit.failCause(answered.cause))
      )
    }

    /** A group that failed, again an item at a time: each caller gets its own item's outcome. */
    const alone = (group: ReadonlyArray<Waiting<I, O, E>>) =>
      Effect.forEach(group, (w) => Effect.map(Effect.exit(options.run([w.item])), (exit) => complete([w], exit)), { discard: true })

    const write = (group: ReadonlyArray<Waiting<I, O, E>>) =>
      Effect.exit(options.run(group.map((w) => w.item))).pipe(
        Effect.flatMap((exit) =>
          Exit.isFailure(exit) && group.length > 1 && !Cause.hasInterruptsOnly(exit.cause)
            ? alone(group)
            : Effect.sync(() => complete(group, exit))
        ),
        // A group stopped with its scope (shutdown) answers its callers instead of leaving them waiting.
        Effect.onInterrupt(() => Effect.sync(() => complete(group, Exit.interrupt()))),
        Effect.ensuring(Effect.sync(() => {
          inFlight--
          dispatch()
        }))
      )

    const dispatch = () => {
      while (!closed && inFlight < options.maxInFlight && waiting.length > 0) {
        inFlight++
        runFork(write(waiting.splice(0, options.maxGroup)))
      }
    }

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        closed = true
        for (const w of waiting.splice(0)) Deferred.doneUnsafe(w.done, Exit.interrupt())
      })
    )

    return (item: I) =>
      Effect.suspend(() => {
        if (closed) return Effect.interrupt
        const done = Deferred.makeUnsafe<O, E>()
        waiting.push({ item, done })
        dispatch()
        return Deferred.await(done)
      })
  })
