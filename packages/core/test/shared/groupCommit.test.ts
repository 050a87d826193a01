import { Deferred, Effect, Exit, Fiber, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { makeGroupCommit } from "../../src/shared/groupCommit.ts"

/**
 * A group commit over a fake write that records each group it is given and
 * waits, group by group, until the test lets it finish.
 */
const setup = (options: { readonly maxGroup: number; readonly maxInFlight: number; readonly refuse?: (item: number) => boolean }) =>
  Effect.gen(function*() {
    const groups: Array<ReadonlyArray<number>> = []
    const gates: Array<Deferred.Deferred<void>> = []
    const started = yield* Deferred.make<void>()
    const submit = yield* makeGroupCommit<number, string, string>({
      maxGroup: options.maxGroup,
      maxInFlight: options.maxInFlight,
      run: (items) =>
        Effect.gen(function*() {
          groups.push(items)
          const gate = Deferred.makeUnsafe<void>()
          gates.push(gate)
          yield* Deferred.succeed(started, undefined)
          yield* Deferred.await(gate)
          const refused = items.find((i) => options.refuse?.(i) === true)
          if (refused !== undefined) return yield* Effect.fail(`refused ${refused}`)
          return items.map((i) => `done ${i}`)
        })
    })
    /** Lets every group started so far finish. */
    const release = Effect.suspend(() => Effect.forEach(gates.splice(0), (g) => Deferred.succeed(g, undefined), { discard: true }))
    return { groups, submit, release, started }
  })

const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Effect.scoped(effect))

/** Lets forked fibers run until they wait. */
const settle = Effect.andThen(Effect.yieldNow, Effect.sleep("5 millis"))

describe("makeGroupCommit", () => {
  it("writes a caller alone at once when a slot is free: no waiting for company", () =>
    run(Effect.gen(function*() {
      const { groups, release, submit } = yield* setup({ maxGroup: 10, maxInFlight: 2 })
      const fiber = yield* Effect.forkChild(submit(1))
      yield* settle
      expect(groups).toEqual([[1]])
      yield* release
      expect(yield* Fiber.join(fiber)).toBe("done 1")
    })))

  it("gathers the callers that arrive while every slot is busy into the next group, up to maxGroup", () =>
    run(Effect.gen(function*() {
      const { groups, release, submit } = yield* setup({ maxGroup: 3, maxInFlight: 1 })
      const first = yield* Effect.forkChild(submit(0))
      yield* settle
      const rest = yield* Effect.forkChild(Effect.all([1, 2, 3, 4, 5].map(submit), { concurrency: "unbounded" }))
      yield* settle
      // The slot is busy with the first caller: the others wait, nothing more has been written.
      expect(groups).toEqual([[0]])
      yield* release
      yield* settle
      expect(groups).toEqual([[0], [1, 2, 3]])
      yield* release
      yield* settle
      expect(groups).toEqual([[0], [1, 2, 3], [4, 5]])
      yield* release
      expect(yield* Fiber.join(first)).toBe("done 0")
      // Each caller gets its own item's result.
      expect(yield* Fiber.join(rest)).toEqual(["done 1", "done 2", "done 3", "done 4", "done 5"])
    })))

  it("runs a failed group again an item at a time, so only the refused item fails", () =>
    run(Effect.gen(function*() {
      const { groups, release, submit } = yield* setup({ maxGroup: 10, maxInFlight: 1, refuse: (i) => i === 2 })
      const first = yield* Effect.forkChild(submit(0))
      yield* settle
      const rest = yield* Effect.forkChild(Effect.all([1, 2, 3].map((i) => Effect.exit(submit(i))), { concurrency: "unbounded" }))
      yield* settle
      for (let i = 0; i < 6; i++) {
        yield* release
        yield* settle
      }
      expect(groups).toEqual([[0], [1, 2, 3], [1], [2], [3]])
      expect(yield* Fiber.join(first)).toBe("done 0")
      const [one, two, three] = yield* Fiber.join(rest)
      expect(one).toEqual(Exit.succeed("done 1"))
      expect(two).toEqual(Exit.fail("refused 2"))
      expect(three).toEqual(Exit.succeed("done 3"))
    })))

  it("fails every caller of a group answered with the wrong number of results", () =>
    run(Effect.gen(function*() {
      const submit = yield* makeGroupCommit<number, string, never>({
        maxGroup: 10,
        maxInFlight: 1,
        run: (items) => Effect.succeed(items.slice(1).map(String))
      })
      const exit = yield* Effect.exit(submit(7))
      expect(Exit.isFailure(exit) && Exit.hasDies(exit)).toBe(true)
    })))

  it("answers the callers still waiting when its scope closes, and refuses new ones", () =>
    Effect.runPromise(Effect.gen(function*() {
      const scope = yield* Scope.make()
      const { started, submit } = yield* Scope.provide(setup({ maxGroup: 10, maxInFlight: 1 }), scope)
      const inFlight = yield* Effect.forkChild(Effect.exit(submit(1)))
      yield* Deferred.await(started)
      const waiting = yield* Effect.forkChild(Effect.exit(submit(2)))
      yield* settle
      yield* Scope.close(scope, Exit.void)
      const [a, b] = [yield* Fiber.join(inFlight), yield* Fiber.join(waiting)]
      expect(Exit.isFailure(a) && Exit.hasInterrupts(a)).toBe(true)
      expect(Exit.isFailure(b) && Exit.hasInterrupts(b)).toBe(true)
      const late = yield* Effect.exit(submit(3))
      expect(Exit.isFailure(late) && Exit.hasInterrupts(late)).toBe(true)
    })))
})
