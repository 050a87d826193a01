/** The median run of alternating rounds, by `key` (the upper middle one when the count is even). */
export const medianBy = <A>(runs: ReadonlyArray<A>, key: (run: A) => number): A =>
  [...runs].sort((x, y) => key(x) - key(y))[Math.floor(runs.length / 2)]!

/** The median of numbers (the mean of the two middle ones when the count is even). */
export const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}
