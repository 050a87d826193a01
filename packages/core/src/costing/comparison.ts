import { type DistanceModel, driveSeconds, type Point, roadMetres } from "../routes/geo.ts"
import { breakdown, categoryTerms, co2Grams, type FleetRates, fleetCost, fleetCostOf, type Trip } from "./fleetCost.ts"
import type { CostComparison, CostMode, HybridStop, Verdict } from "./model.ts"
import { roundHalfEven } from "../shared/money.ts"
import type { StopPrice } from "./pricing.ts"

export interface CostingStop extends Point {
  readonly id: string
  readonly label: string
  readonly serviceSeconds: number
}

export interface ComparisonInput {
  readonly currency: string
  readonly mode: CostMode
  readonly rates: FleetRates
  readonly model: DistanceModel
  readonly start: Point
  readonly roundTrip: boolean
  /** The whole route: its distance and driver time. */
  readonly trip: Trip
  /** In route order; a stop's index is its place in this list. */
  readonly stops: ReadonlyArray<CostingStop>
  /** The courier price of each stop (same order), undefined when it has none. */
  readonly prices: ReadonlyArray<StopPrice | undefined>
  readonly senderMissing: boolean
}

/**
 * The route with some stops taken out, for marginal costs: stops still on the
 * route are linked in route order, and each one's detour (what the route
 * saves in road metres without it, over the stops that remain) is kept up to
 * date as stops leave.
 */
class RemainingRoute {
  readonly prev: Int32Array
  readonly next: Int32Array
  readonly detour: Float64Array
  readonly onRoute: Uint8Array
  count: number
  metres: number
  seconds: number
  /** Set by `without`: the route's metres and seconds without the stop asked about. */
  metresWithout = 0
  secondsWithout = 0

  constructor(readonly input: ComparisonInput) {
    const n = input.stops.length
    this.prev = new Int32Array(n)
    this.next = new Int32Array(n)
    this.detour = new Float64Array(n)
    this.onRoute = new Uint8Array(n).fill(1)
    this.count = n
    this.metres = input.trip.metres
    this.seconds = input.trip.seconds
    for (let i = 0; i < n; i++) {
      this.prev[i] = i - 1
      this.next[i] = i + 1 < n ? i + 1 : -1
    }
    for (let i = 0; i < n; i++) this.detour[i] = this.detourOf(i)
  }

  private point(i: number): Point {
    return i === -1 ? this.input.start : this.input.stops[i]!
  }

  private leg(a: number, b: number): number {
    return roadMetres(this.input.model, this.point(a), this.point(b))
  }

  private detourOf(i: number): number {
    const p = this.prev[i]!
    const nx = this.next[i]!
    if (nx === -1 && !this.input.roundTrip) return this.leg(p, i)
    const after = nx === -1 ? -1 : nx
    return Math.max(0, this.leg(p, i) + this.leg(i, after) - this.leg(p, after))
  }

  /**
   * The route's distance and time without stop `i` (nothing at all when it is
   * the last one left), into `metresWithout` / `secondsWithout`: the greedy
   * asks this some 20 000 times for 200 stops, so it allocates nothing.
   */
  without(i: number): void {
    if (this.count === 1) {
      this.metresWithout = 0
      this.secondsWithout = 0
      return
    }
    const saved = Math.round(this.detour[i]!)
    this.metresWithout = Math.max(0, this.metres - saved)
    this.secondsWithout = Math.max(
      0,
      this.seconds - this.input.stops[i]!.serviceSeconds - driveSeconds(this.input.model, saved)
    )
  }

  remove(i: number): void {
    this.without(i)
    this.metres = this.metresWithout
    this.seconds = this.secondsWithout
    this.onRoute[i] = 0
    this.count--
    const p = this.prev[i]!
    const nx = this.next[i]!
    if (p !== -1) this.next[p] = nx
    if (nx !== -1) this.prev[nx] = p
    if (p !== -1) this.detour[p] = this.detourOf(p)
    if (nx !== -1) this.detour[nx] = this.detourOf(nx)
  }
}

/**
 * The marginal fleet cost of every stop on the whole route (route order): the
 * route's cost minus its cost without that stop.
 */
export const stopMarginals = (input: ComparisonInput): Array<number> => {
  const terms = categoryTerms(input.mode, input.rates)
  const route = new RemainingRoute(input)
  const whole = fleetCost(terms, input.trip)
  return input.stops.map((_, i) => {
    route.without(i)
    return whole - fleetCostOf(terms, route.metresWithout, route.secondsWithout)
  })
}

/**
 * The greedy hybrid: while some stop's courier price is below its marginal
 * fleet cost, the stop with the largest difference (ties: lowest index) moves
 * to the courier, and marginal costs are recomputed over the stops left.
 * Returns the moves in order and the cost of fleet plus courier afterwards.
 * Every stop must have a price.
 *
 * `prune` (the default) skips stops whose best possible gain cannot beat the
 * best found so far; it never changes the result, only the time.
 */
export const greedySplit = (
  input: ComparisonInput,
  options: { readonly prune: boolean } = { prune: true }
): { readonly moves: Array<HybridStop>; readonly hybridCost: number } => {
  const n = input.stops.length
  const terms = categoryTerms(input.mode, input.rates)
  const route = new RemainingRoute(input)
  // Each category rounds by at most half a unit, so a marginal cost lies within
  // `terms.length` of its unrounded value.
  let perMetre = 0
  let perSecond = 0
  for (const t of terms) {
    if (t.perSecond) perSecond += t.slope
    else perMetre += t.slope
  }
  const slack = options.prune ? terms.length + 1 : Infinity
  const moves: Array<HybridStop> = []
  let costNow = fleetCost(terms, input.trip)
  let hybridCost = costNow
  while (route.count > 0) {
    let best = -1
    let bestGain = 0
    let bestMarginal = 0
    for (let i = 0; i < n; i++) {
      if (route.onRoute[i] === 0) continue
      const price = input.prices[i]!.amountMinor
      route.without(i)
      const bound = (route.metres - route.metresWithout) * perMetre + (route.seconds - route.secondsWithout) * perSecond
      if (bound + slack - price <= bestGain) continue
      const m = costNow - fleetCostOf(terms, route.metresWithout, route.secondsWithout)
      const gain = m - price
      if (gain > bestGain) {
        best = i
        bestGain = gain
        bestMarginal = m
      }
    }
    if (best === -1) break
    const price = input.prices[best]!
    moves.push({
      stopId: input.stops[best]!.id,
      label: input.stops[best]!.label,
      courier: price.courier,
      courierMinor: price.amountMinor,
      fleetMinor: bestMarginal
    })
    route.remove(best)
    costNow -= bestMarginal
    hybridCost = hybridCost - bestMarginal + price.amountMinor
  }
  return { moves, hybridCost }
}

/** ⌊a / b⌋ of non-negative integers, exact even where the float quotient rounds up. */
const floorDiv = (a: number, b: number): number => {
  let q = Math.floor(a / b)
  while (q * b > a) q--
  while ((q + 1) * b <= a) q++
  return q
}

/** Ties go to the first option in this order. */
const verdictOrder: ReadonlyArray<Verdict> = ["FLEET", "HYBRID", "COURIER"]

/**
 * Own fleet versus courier for one route (docs/decisions.md, "Design: route cost comparison").
 *
 * - A stop's marginal fleet cost is the fleet cost of the route minus the
 *   fleet cost of the route without it, both in the requested mode; without
 *   it, the route drives its detour less and spends its service time and that
 *   detour's driving time less.
 * - Hybrid: while some stop's courier price is below its marginal fleet cost,
 *   the stop with the largest difference (ties: lowest index) goes to the
 *   courier and the marginal costs are recomputed over the stops that remain.
 *   The split is reported when it keeps at least one stop on the fleet, moves
 *   at least one, and costs no more than the courier taking everything.
 * - Break-even: the route's cost splits into a fixed part (the fleet cost less
 *   every stop's marginal cost) and the stops' marginal costs; with N stops
 *   like the route's average, the fleet costs F + N·M/n and the courier
 *   N·Q/n, so the smallest N with N·(Q − M) > n·F. Null when the courier is
 *   never dearer per stop than the fleet's marginal cost.
 * - Unpriced stops (nothing on the route could be priced): the courier side is
 *   incomplete, so the verdict is FLEET and the courier figures are zero.
 */
export const compareRoute = (input: ComparisonInput): CostComparison => {
  const n = input.stops.length
  const terms = categoryTerms(input.mode, input.rates)
  const fleetBreakdown = breakdown(terms, input.trip)
  const fleetMinor = fleetBreakdown.reduce((sum, c) => sum + c.amountMinor, 0)

  let pricedStops = 0
  let estimatedStops = 0
  let courierProjectedMinor = 0
  for (const price of input.prices) {
    if (price === undefined) continue
    pricedStops++
    if (price.estimated) estimatedStops++
    courierProjectedMinor += price.amountMinor
  }
  const unpricedStops = n - pricedStops
  const complete = n > 0 && unpricedStops === 0

  const sumOfMarginals = complete ? stopMarginals(input).reduce((sum, m) => sum + m, 0) : 0
  const { hybridCost, moves: hybridStops } = complete ? greedySplit(input) : { hybridCost: fleetMinor, moves: [] }

  const isSplit = hybridStops.length > 0 && hybridStops.length < n && hybridCost <= courierProjectedMinor
  const split = isSplit ? hybridStops : []
  const cheaperPure = complete ? Math.min(fleetMinor, courierProjectedMinor) : fleetMinor
  const hybridSavingMinor = isSplit ? cheaperPure - hybridCost : 0

  const costOf: Record<Verdict, number | undefined> = {
    FLEET: fleetMinor,
    HYBRID: isSplit ? hybridCost : undefined,
    COURIER: complete ? courierProjectedMinor : undefined
  }
  let verdict: Verdict = "FLEET"
  for (const option of verdictOrder) {
    const cost = costOf[option]
    if (cost !== undefined && cost < costOf[verdict]!) verdict = option
  }

  let breakEvenStops: number | null = null
  if (complete) {
    const fixed = Math.max(0, fleetMinor - sumOfMarginals)
    const perStopGap = courierProjectedMinor - sumOfMarginals
    if (perStopGap > 0) breakEvenStops = floorDiv(n * fixed, perStopGap) + 1
  }

  return {
    currency: input.currency,
    mode: input.mode,
    fleetMinor,
    fleetPerKmMinor: input.trip.metres === 0 ? 0 : roundHalfEven(fleetMinor * 1000, input.trip.metres),
    estimatedPercent: n === 0 ? 0 : roundHalfEven(estimatedStops * 1000, n) / 10,
    courierProjectedMinor,
    pricedStops,
    unpricedStops,
    estimatedStops,
    savingMinor: complete ? courierProjectedMinor - fleetMinor : 0,
    verdict,
    breakdown: fleetBreakdown,
    hybridStops: split,
    hybridSavingMinor,
    breakEvenStops,
    co2Grams: co2Grams(input.rates, input.trip),
    senderMissing: input.senderMissing
  }
}
