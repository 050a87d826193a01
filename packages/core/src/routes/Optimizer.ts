import { Context, Effect } from "effect"
import type { Unprocessable } from "../shared/errors.ts"
import { defaultDistanceModel, type DistanceModel, driveSeconds, metresToKm, type Point, roadMetres } from "./geo.ts"

export interface OptimizerStop extends Point {
  readonly id: string
  readonly service_minutes: number
  readonly parcels: number
  readonly weight_kg: number
  readonly window_start: string | null
  readonly window_end: string | null
}

export interface OptimizerInput {
  readonly start: Point
  readonly roundTrip: boolean
  /** In their current order. */
  readonly stops: ReadonlyArray<OptimizerStop>
  readonly capacityKg: number | null
  readonly capacityParcels: number | null
}

export interface OptimizedRoute {
  /** Every stop id of the input, once, in visiting order. */
  readonly order: ReadonlyArray<string>
  readonly totalDistanceKm: number
  readonly totalDurationMinutes: number
  /** Names the engine, recorded on the route as `optimizer`. */
  readonly optimizer: string
}

export interface OptimizerShape {
  /** An engine that cannot plan the route fails with a 422 of its own code. */
  readonly optimize: (input: OptimizerInput) => Effect.Effect<OptimizedRoute, Unprocessable>
}

export const BUILTIN_OPTIMIZER = "builtin:nearest-neighbour+2-opt"

/**
 * Orders stops: 2-opt segment reversals until none shortens the tour, started
 * from two tours — nearest neighbour from the start (ties to the lowest index)
 * and the order given — keeping the shorter result (the nearest-neighbour one
 * on a tie). 2-opt never lengthens the tour it starts from, so an optimized
 * route is never longer than the order it was given. Deterministic: the same
 * input always gives the same order. Time windows are not enforced; an engine
 * that honours them can be plugged in as the `Optimizer`.
 */
export const planRoute = (
  model: DistanceModel,
  input: { readonly start: Point; readonly roundTrip: boolean; readonly stops: ReadonlyArray<Point> }
): { readonly order: ReadonlyArray<number>; readonly metres: number } => {
  const n = input.stops.length
  if (n === 0) return { order: [], metres: 0 }
  const size = n + 1
  const nodes: Array<Point> = [input.start, ...input.stops]
  const d = new Float64Array(size * size)
  for (let i = 0; i < size; i++) {
    for (let j = i + 1; j < size; j++) {
      const m = roadMetres(model, nodes[i]!, nodes[j]!)
      d[i * size + j] = m
      d[j * size + i] = m
    }
  }
  const dist = (a: number, b: number) => d[a * size + b]!

  // Tours hold node numbers: 0 is the start, stop i is node i + 1.
  const nearestNeighbour = (): Array<number> => {
    const tour: Array<number> = []
    const visited = new Uint8Array(size)
    let current = 0
    for (let k = 0; k < n; k++) {
      let best = -1
      let bestDistance = Infinity
      for (let j = 1; j < size; j++) {
        if (visited[j] === 0 && dist(current, j) < bestDistance) {
          best = j
          bestDistance = dist(current, j)
        }
      }
      visited[best] = 1
      tour.push(best)
      current = best
    }
    return tour
  }

  const EPSILON = 1e-7
  /** Reverses segments while one shortens the tour (in place; at most 200 passes). */
  const twoOpt = (tour: Array<number>): Array<number> => {
    for (let pass = 0, improved = true; improved && pass < 200; pass++) {
      improved = false
      for (let i = 0; i < n - 1; i++) {
        const a = i === 0 ? 0 : tour[i - 1]!
        for (let j = i + 1; j < n; j++) {
          const last = j === n - 1
          const b = last ? (input.roundTrip ? 0 : -1) : tour[j + 1]!
          const before = dist(a, tour[i]!) + (b === -1 ? 0 : dist(tour[j]!, b))
          const after = dist(a, tour[j]!) + (b === -1 ? 0 : dist(tour[i]!, b))
          if (after < before - EPSILON) {
            for (let lo = i, hi = j; lo < hi; lo++, hi--) {
              const t = tour[lo]!
              tour[lo] = tour[hi]!
              tour[hi] = t
            }
            improved = true
          }
        }
      }
    }
    return tour
  }

  const length = (tour: ReadonlyArray<number>): number => {
    let metres = dist(0, tour[0]!)
    for (let k = 1; k < n; k++) metres += dist(tour[k - 1]!, tour[k]!)
    if (input.roundTrip) metres += dist(tour[n - 1]!, 0)
    return metres
  }

  const fromNearest = twoOpt(nearestNeighbour())
  const fromGiven = twoOpt(Array.from({ length: n }, (_, i) => i + 1))
  const nearestMetres = length(fromNearest)
  const givenMetres = length(fromGiven)
  const [tour, metres] = givenMetres < nearestMetres - EPSILON ? [fromGiven, givenMetres] : [fromNearest, nearestMetres]
  return { order: tour.map((node) => node - 1), metres: Math.round(metres) }
}

/** Whole minutes of a route: driving at the model's speed plus every stop's service time. */
export const routeMinutes = (model: DistanceModel, metres: number, serviceMinutes: number): number =>
  Math.round((driveSeconds(model, metres) + serviceMinutes * 60) / 60)

export const builtinOptimizer = (model: DistanceModel = defaultDistanceModel): OptimizerShape => ({
  optimize: (input) =>
    Effect.sync(() => {
      const plan = planRoute(model, input)
      const service = input.stops.reduce((sum, s) => sum + s.service_minutes, 0)
      return {
        order: plan.order.map((i) => input.stops[i]!.id),
        totalDistanceKm: metresToKm(plan.metres),
        totalDurationMinutes: routeMinutes(model, plan.metres, service),
        optimizer: BUILTIN_OPTIMIZER
      }
    })
})

/**
 * The route optimizer port. Without a layer of its own the built-in engine
 * answers; a host plugs in a real one with `Layer.succeed(Optimizer, engine)`.
 */
export class Optimizer extends Context.Reference<OptimizerShape>("@opsplatform/core/routes/Optimizer", {
  defaultValue: () => builtinOptimizer()
}) {}
