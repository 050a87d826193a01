/**
 * The house style of these benchmarks on a shared machine, where the load
 * changes faster than a benchmark runs: the contenders take turns in short
 * slices (about `sliceMs` each, in a rotating order), every ratio is taken
 * between slices of the same turn, a round is `turns` turns, and figures are
 * the median of the rounds.
 */

import { median } from "../support/rounds.ts"

/** A contender: its name and one call (awaited when the name contains "Async"). */
export type Contender<H> = readonly [name: string, run: (headers: H) => unknown]

export interface TurnResults {
  /** ops/s of a contender: the median of its rounds. */
  readonly opsPerSecond: (name: string) => number
  /** How many times faster `a` is than `b`: per round the median over turns, then the median of rounds and their range. */
  readonly speedup: (a: string, b: string) => { readonly median: number; readonly min: number; readonly max: number }
}

export const runTurns = async <H>(
  contenders: ReadonlyArray<Contender<H>>,
  options: {
    readonly rounds: number
    readonly turns: number
    readonly sliceMs: number
    /** Fresh headers for a round (the tolerance reads the real clock). */
    readonly headers: () => H
    readonly warmSlices?: number
    /** Calls per slice while warming up, before each contender's own count is known. */
    readonly warmCalls?: number
    readonly minCalls?: number
  }
): Promise<TurnResults> => {
  let sink: unknown
  const callsOf = new Map<string, number>()
  /** Nanoseconds per call over one slice. */
  const slice = async (name: string, run: (headers: H) => unknown, h: H) => {
    const calls = callsOf.get(name) ?? options.warmCalls ?? 20
    const started = process.hrtime.bigint()
    if (name.includes("Async")) {
      for (let i = 0; i < calls; i++) sink = await run(h)
    } else {
      for (let i = 0; i < calls; i++) sink = run(h)
    }
    return Number(process.hrtime.bigint() - started) / calls
  }

  const warmSlices = options.warmSlices ?? 30
  const h = options.headers()
  for (const [name, run] of contenders) {
    const warm: Array<number> = []
    for (let i = 0; i < warmSlices; i++) warm.push(await slice(name, run, h))
    callsOf.set(name, Math.max(options.minCalls ?? 10, Math.round((options.sliceMs * 1e6) / median(warm.slice(warmSlices / 3)))))
  }
  const names = contenders.map(([name]) => name)
  const roundsOf: Array<{ ns: Map<string, number>; turns: Array<Map<string, number>> }> = []
  for (let round = 0; round < options.rounds; round++) {
    const h = options.headers()
    const turns: Array<Map<string, number>> = []
    for (let turn = 0; turn < options.turns; turn++) {
      const times = new Map<string, number>()
      for (let k = 0; k < contenders.length; k++) {
        const [name, run] = contenders[(k + turn) % contenders.length]!
        times.set(name, await slice(name, run, h))
      }
      turns.push(times)
    }
    roundsOf.push({ ns: new Map(names.map((n) => [n, median(turns.map((t) => t.get(n)!))])), turns })
  }
  if (sink === undefined) throw new Error("no result")
  return {
    opsPerSecond: (name) => median(roundsOf.map((r) => 1e9 / r.ns.get(name)!)),
    speedup: (a, b) => {
      const perRound = roundsOf.map(({ turns }) => median(turns.map((t) => t.get(b)! / t.get(a)!)))
      return { median: median(perRound), min: Math.min(...perRound), max: Math.max(...perRound) }
    }
  }
}

/** A ratio to print: its label, the two contenders (`a` over `b`: how many times faster `a` is) and the target. */
export type Ratio = readonly [label: string, a: string, b: string, target: string]

/** The two tables of the README: ops/s per contender, then each ratio with the range of the rounds. */
export const printTables = (results: TurnResults, names: ReadonlyArray<string>, ratios: ReadonlyArray<Ratio>): void => {
  const format = (n: number) => Math.round(n).toLocaleString("en-US")
  console.log("| verifier | ops/s (median of rounds) |")
  console.log("|---|---:|")
  for (const name of names) console.log(`| ${name} | ${format(results.opsPerSecond(name))} |`)
  console.log("\n| ratio | median | range of rounds | target |")
  console.log("|---|---:|---:|---:|")
  for (const [label, a, b, target] of ratios) {
    const r = results.speedup(a, b)
    console.log(`| ${label} | ${r.median.toFixed(2)} | ${r.min.toFixed(2)}–${r.max.toFixed(2)} | ${target} |`)
  }
}

/** Whether a contender refuses a delivery: it answers false or throws. */
export const refuses = async (run: () => unknown): Promise<boolean> => {
  try {
    return (await run()) === false
  } catch {
    return true
  }
}
