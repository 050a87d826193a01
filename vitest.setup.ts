import fc from "fast-check"

/**
 * A property that fails is shrunk to a small counterexample, and shrinking a
 * large input can run for minutes; a synchronous property also blocks the
 * test worker, so the test timeout cannot stop it. Past this limit fast-check
 * stops and reports the failure with the smallest counterexample found so far.
 * Passing properties finish far within it.
 */
fc.configureGlobal({ interruptAfterTimeLimit: 30_000 })
