/** The median run of alternating rounds, by `key` (the upper middle one when the count is even). */
export const medianBy = <A>(runs: ReadonlyArray<A>, key: (run: A) => number): A =>
  [...runs].sort((x, y) => key(x) - key(y))[Math.floor(runs.length / 2)]!
