import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type ComparisonInput, compareRoute, greedySplit, stopMarginals } from "../../src/costing/comparison.ts"
import { breakdown, categoryTerms, co2Grams, type FleetRates, fleetCost, fleetRates } from "../../src/costing/fleetCost.ts"
import type { CostComparison, CostMode } from "../../src/costing/model.ts"
import type { StopPrice } from "../../src/costing/pricing.ts"
import { defaultDistanceModel, driveSeconds, pathMetres } from "../../src/routes/geo.ts"
import { east, equatorModel } from "../support/equator.ts"

const zeroRates: FleetRates = {
  fuelMlPer100Km: 0,
  fuelPricePerLitreMinor: 0,
  driverCostPerHourMinor: 0,
  tollsPerKmMinor: 0,
  depreciationPerKmMinor: 0,
  insurancePerYearMinor: 0,
  annualKm: null,
  maintenancePerKmMinor: 0,
  tyresPerKmMinor: 0,
  co2GramsPerLitre: 3197
}

describe("fleet categories (worked example)", () => {
  // 8.5 l/100 km, 7.00 per litre, 30.00 per hour, tolls 0.02/km, depreciation 0.10/km,
  // insurance 1200.00 a year over 40 000 km, maintenance 0.04/km, tyres 0.01/km.
  const rates = fleetRates({
    fuel_consumption_l_per_100km: 8.5,
    fuel_price_per_litre_minor: 700,
    driver_cost_per_hour_minor: 3000,
    tolls_per_km_minor: 2,
    depreciation_per_km_minor: 10,
    insurance_per_year_minor: 120_000,
    annual_km: 40_000,
    maintenance_per_km_minor: 4,
    tyres_per_km_minor: 1,
    co2_grams_per_litre: 3197
  })
  // 123.456 km in 150 minutes.
  const trip = { metres: 123_456, seconds: 9_000 }

  it("MARGINAL: fuel, driver and tolls, each rounded half-even once", () => {
    // FUEL   = 123.456 km × 8.5/100 l/km × 700 = 7345.632 → 7346
    // DRIVER = 150/60 h × 3000 = 7500 exactly
    // TOLLS  = 123.456 × 2 = 246.912 → 247
    expect(breakdown(categoryTerms("MARGINAL", rates), trip)).toEqual([
      { category: "FUEL", amountMinor: 7346 },
      { category: "DRIVER", amountMinor: 7500 },
      { category: "TOLLS", amountMinor: 247 }
    ])
    expect(fleetCost(categoryTerms("MARGINAL", rates), trip)).toBe(15_093)
  })

  it("FULL adds depreciation, insurance, maintenance and tyres", () => {
    // DEPRECIATION = 123.456 × 10 = 1234.56 → 1235
    // INSURANCE    = 123.456 × 120000 / 40000 = 370.368 → 370
    // MAINTENANCE  = 123.456 × 4 = 493.824 → 494
    // TYRES        = 123.456 × 1 = 123.456 → 123
    // 15093 + 1235 + 370 + 494 + 123 = 17315
    expect(breakdown(categoryTerms("FULL", rates), trip).slice(3)).toEqual([
      { category: "DEPRECIATION", amountMinor: 1235 },
      { category: "INSURANCE", amountMinor: 370 },
      { category: "MAINTENANCE", amountMinor: 494 },
      { category: "TYRES", amountMinor: 123 }
    ])
    expect(fleetCost(categoryTerms("FULL", rates), trip)).toBe(17_315)
  })

  it("rounds an exact half to even, per category", () => {
    // TOLLS on 1.250 km at 2/km = 2.5 → 2; on 1.750 km = 3.5 → 4.
    const tolls = { ...zeroRates, tollsPerKmMinor: 2 }
    expect(fleetCost(categoryTerms("MARGINAL", tolls), { metres: 1250, seconds: 0 })).toBe(2)
    expect(fleetCost(categoryTerms("MARGINAL", tolls), { metres: 1750, seconds: 0 })).toBe(4)
  })

  it("CO2: d · c/100 · 3197 g per litre", () => {
    // 123.456 km × 8.5 l/100 km = 10.49376 l × 3197 = 33548.55072 g → 33549
    expect(co2Grams(rates, trip)).toBe(33_549)
  })
})

/**
 * Three stops 1, 2 and 3 km east of the start on the equator model (1° = 1 km
 * of road, 10 m per second), round trip: 1 + 1 + 1 + 3 = 6 km; 600 s driving
 * plus 3 × 5 min service = 1500 s. Fuel 10 l/100 km at 5.00 and the driver at
 * 36.00 an hour (1 minor unit per second), no tolls:
 *   FUEL = 6 × 10/100 × 500 = 300, DRIVER = 1500 → fleet 1800.
 * Marginal cost of each stop (the route without it, over the remaining order):
 *   A (1 km): detour 1 + 1 − 2 = 0 m; without it 6000 m, 1200 s → 300 + 1200 = 1500 → 300
 *   B (2 km): detour 0 m → 300
 *   C (3 km): detour 1 + 3 − 2 = 2000 m; without it 4000 m, 1500 − 300 − 200 = 1000 s → 200 + 1000 → 600
 * Sum of marginals 1200, fixed part 1800 − 1200 = 600.
 */
const threeStops = (prices: ReadonlyArray<number | undefined>, mode: CostMode = "MARGINAL", estimated = false): ComparisonInput => ({
  currency: "EUR",
  mode,
  rates: { ...zeroRates, fuelMlPer100Km: 10_000, fuelPricePerLitreMinor: 500, driverCostPerHourMinor: 3600, depreciationPerKmMinor: 100 },
  model: equatorModel,
  start: east(0),
  roundTrip: true,
  trip: { metres: 6000, seconds: 1500 },
  stops: ["A", "B", "C"].map((label, i) => ({ ...east(i + 1), id: `stop-${label}`, label, serviceSeconds: 300 })),
  prices: prices.map((p): StopPrice | undefined => (p === undefined ? undefined : { courier: "Fast", amountMinor: p, estimated })),
  senderMissing: false
})

describe("compareRoute (worked examples)", () => {
  it("HYBRID: the courier takes C then B; A stays on the fleet", () => {
    // Courier prices A 1000, B 450, C 350 → courier 1800.
    // Round 1: gains A 300−1000, B 300−450, C 600−350 = 250 → C goes; hybrid 1800 − 600 + 350 = 1550.
    //   Route 0→A→B→0: 4000 m, 1000 s, fleet 1200.
    // Round 2: A detour 0 → marginal 1200 − (200 + 700) = 300, gain −700;
    //   B detour 1 + 2 − 1 = 2000 m → without it 2000 m, 500 s → 100 + 500 = 600 → marginal 600, gain 150 → B goes;
    //   hybrid 1550 − 600 + 450 = 1400.
    // Round 3: A alone costs 600, its courier price 1000: stays.
    // Saving of the split against the cheaper pure option min(1800, 1800) = 400.
    // Break-even: N·(1800 − 1200) > 3·600 → N > 3 → 4.
    const result = compareRoute(threeStops([1000, 450, 350]))
    expect(result).toEqual({
      currency: "EUR",
      mode: "MARGINAL",
      fleetMinor: 1800,
      fleetPerKmMinor: 300, // 1800 / 6 km
      estimatedPercent: 0,
      courierProjectedMinor: 1800,
      pricedStops: 3,
      unpricedStops: 0,
      estimatedStops: 0,
      savingMinor: 0,
      verdict: "HYBRID",
      breakdown: [
        { category: "FUEL", amountMinor: 300 },
        { category: "DRIVER", amountMinor: 1500 },
        { category: "TOLLS", amountMinor: 0 }
      ],
      hybridStops: [
        { stopId: "stop-C", label: "C", courier: "Fast", courierMinor: 350, fleetMinor: 600 },
        { stopId: "stop-B", label: "B", courier: "Fast", courierMinor: 450, fleetMinor: 600 }
      ],
      hybridSavingMinor: 400,
      breakEvenStops: 4,
      co2Grams: 1918, // 6 km × 10/100 l × 3197 = 1918.2
      senderMissing: false
    } satisfies CostComparison)
  })

  it("the marginal cost of each stop is the route's cost without it", () => {
    expect(stopMarginals(threeStops([1, 1, 1]))).toEqual([300, 300, 600])
  })

  it("COURIER: when the greedy split ends with every stop at the courier there is no split", () => {
    // Prices A 250, B 350, C 400 → courier 1000 < fleet 1800.
    // C goes (gain 200), then B (600 − 350), then A alone (600 − 250): all three move, which is the pure courier option.
    // Break-even: courier per stop 1000/3 is below the marginal 1200/3 → never (null).
    const result = compareRoute(threeStops([250, 350, 400]))
    expect(result.verdict).toBe("COURIER")
    expect(result.savingMinor).toBe(-800)
    expect(result.hybridStops).toEqual([])
    expect(result.hybridSavingMinor).toBe(0)
    expect(result.breakEvenStops).toBeNull()
  })

  it("FLEET: no stop is cheaper by courier than its marginal cost", () => {
    // Prices 800 each → courier 2400; gains 300−800, 300−800, 600−800 are all negative.
    // Break-even: N·(2400 − 1200) > 3·600 → N > 1.5 → 2.
    const result = compareRoute(threeStops([800, 800, 800]))
    expect(result.verdict).toBe("FLEET")
    expect(result.savingMinor).toBe(600)
    expect(result.hybridStops).toEqual([])
    expect(result.breakEvenStops).toBe(2)
  })

  it("a tie between fleet and courier is FLEET", () => {
    // 600 × 3 = 1800 = fleet; C's gain 600 − 600 = 0 is not a saving.
    const result = compareRoute(threeStops([600, 600, 600]))
    expect(result.courierProjectedMinor).toBe(result.fleetMinor)
    expect(result.verdict).toBe("FLEET")
  })

  it("a hybrid costing exactly what the courier costs is HYBRID", () => {
    // A 600, B 450, C 350: C then B go (hybrid 1400) and A stays (600 = its marginal); courier = 1400.
    const result = compareRoute(threeStops([600, 450, 350]))
    expect(result.courierProjectedMinor).toBe(1400)
    expect(result.hybridStops.map((s) => s.label)).toEqual(["C", "B"])
    expect(result.hybridSavingMinor).toBe(0)
    expect(result.verdict).toBe("HYBRID")
  })

  it("FULL adds depreciation (1.00/km) to every marginal cost", () => {
    // DEPRECIATION = 6 km × 100 = 600 → fleet 2400; C's marginal gains 2 km × 100 = 200 → 800.
    const result = compareRoute(threeStops([1000, 450, 350], "FULL"))
    expect(result.mode).toBe("FULL")
    expect(result.fleetMinor).toBe(2400)
    expect(result.breakdown.map((c) => c.category)).toEqual(["FUEL", "DRIVER", "TOLLS", "DEPRECIATION", "INSURANCE", "MAINTENANCE", "TYRES"])
    expect(result.hybridStops[0]).toEqual({ stopId: "stop-C", label: "C", courier: "Fast", courierMinor: 350, fleetMinor: 800 })
  })

  it("counts estimated stops and reports their share with one decimal", () => {
    const input = threeStops([800, 800, 800])
    const result = compareRoute({ ...input, prices: [input.prices[0], { ...input.prices[1]!, estimated: true }, input.prices[2]] })
    expect(result.estimatedStops).toBe(1)
    expect(result.estimatedPercent).toBe(33.3) // 1/3 = 33.33…%
  })

  it("without any price the courier side is incomplete: FLEET, zero courier figures", () => {
    const result = compareRoute({ ...threeStops([undefined, undefined, undefined]), senderMissing: true })
    expect(result).toMatchObject({
      fleetMinor: 1800,
      courierProjectedMinor: 0,
      pricedStops: 0,
      unpricedStops: 3,
      savingMinor: 0,
      verdict: "FLEET",
      hybridStops: [],
      hybridSavingMinor: 0,
      breakEvenStops: null,
      senderMissing: true
    })
  })

  it("a route that drives nowhere has no cost per km", () => {
    const result = compareRoute({ ...threeStops([1, 1, 1]), trip: { metres: 0, seconds: 900 } })
    expect(result.fleetPerKmMinor).toBe(0)
  })
})

// ---- Properties --------------------------------------------------------------

const arbRates = fc.record({
  fuelMlPer100Km: fc.integer({ min: 0, max: 40_000 }),
  fuelPricePerLitreMinor: fc.integer({ min: 0, max: 2_000 }),
  driverCostPerHourMinor: fc.integer({ min: 0, max: 10_000 }),
  tollsPerKmMinor: fc.integer({ min: 0, max: 50 }),
  depreciationPerKmMinor: fc.integer({ min: 0, max: 100 }),
  insurancePerYearMinor: fc.integer({ min: 0, max: 1_000_000 }),
  annualKm: fc.integer({ min: 1, max: 200_000 }),
  maintenancePerKmMinor: fc.integer({ min: 0, max: 50 }),
  tyresPerKmMinor: fc.integer({ min: 0, max: 20 }),
  co2GramsPerLitre: fc.integer({ min: 0, max: 5_000 })
})

const arbPoint = fc.record({
  latitude: fc.double({ min: 44.3, max: 44.6, noNaN: true }),
  longitude: fc.double({ min: 25.9, max: 26.3, noNaN: true })
})

const arbInput = fc.record({
  rates: arbRates,
  mode: fc.constantFrom<CostMode>("MARGINAL", "FULL"),
  start: arbPoint,
  roundTrip: fc.boolean(),
  optimizedFactor: fc.option(fc.double({ min: 0.8, max: 1.2, noNaN: true }), { nil: undefined }),
  stops: fc.array(
    fc.record({
      point: arbPoint,
      serviceSeconds: fc.integer({ min: 0, max: 1800 }),
      price: fc.integer({ min: 0, max: 5_000 }),
      estimated: fc.boolean()
    }),
    { minLength: 1, maxLength: 14 }
  )
}).map(({ mode, optimizedFactor, rates, roundTrip, start, stops }): ComparisonInput => {
  const model = defaultDistanceModel
  const metres = pathMetres(model, start, stops.map((s) => s.point), roundTrip)
  const seconds = driveSeconds(model, metres) + stops.reduce((sum, s) => sum + s.serviceSeconds, 0)
  return {
    currency: "RON",
    mode,
    rates,
    model,
    start,
    roundTrip,
    // Sometimes the route carries an optimizer's totals that differ from the model's.
    trip: optimizedFactor === undefined ? { metres, seconds } : { metres: Math.round(metres * optimizedFactor), seconds },
    stops: stops.map((s, i) => ({ ...s.point, id: `s${i}`, label: `Stop ${i}`, serviceSeconds: s.serviceSeconds })),
    prices: stops.map((s) => ({ courier: s.price % 2 === 0 ? "Even" : "Odd", amountMinor: s.price, estimated: s.estimated })),
    senderMissing: false
  }
})

const costOf = (r: CostComparison) => ({
  FLEET: r.fleetMinor,
  COURIER: r.courierProjectedMinor,
  HYBRID: r.hybridStops.length === 0 ? undefined : Math.min(r.fleetMinor, r.courierProjectedMinor) - r.hybridSavingMinor
})

describe("compareRoute (properties)", () => {
  it("the breakdown adds up to fleetMinor and every category is its exact value rounded half-even once", () => {
    fc.assert(
      fc.property(arbInput, (input) => {
        const result = compareRoute(input)
        expect(result.breakdown.reduce((sum, c) => sum + c.amountMinor, 0)).toBe(result.fleetMinor)
        const { metres, seconds } = input.trip
        const r = input.rates
        const exact: Record<string, [bigint, bigint]> = {
          FUEL: [BigInt(metres) * BigInt(r.fuelMlPer100Km) * BigInt(r.fuelPricePerLitreMinor), 100_000_000n],
          DRIVER: [BigInt(seconds) * BigInt(r.driverCostPerHourMinor), 3600n],
          TOLLS: [BigInt(metres) * BigInt(r.tollsPerKmMinor), 1000n],
          DEPRECIATION: [BigInt(metres) * BigInt(r.depreciationPerKmMinor), 1000n],
          INSURANCE: [BigInt(metres) * BigInt(r.insurancePerYearMinor), 1000n * BigInt(r.annualKm!)],
          MAINTENANCE: [BigInt(metres) * BigInt(r.maintenancePerKmMinor), 1000n],
          TYRES: [BigInt(metres) * BigInt(r.tyresPerKmMinor), 1000n]
        }
        for (const { amountMinor, category } of result.breakdown) {
          const [n, d] = exact[category]!
          const q = n / d
          const twice = (n - q * d) * 2n
          const expected = twice > d || (twice === d && q % 2n === 1n) ? q + 1n : q
          expect(amountMinor).toBe(Number(expected))
        }
      }),
      { numRuns: 300 }
    )
  })

  it("FULL is never cheaper than MARGINAL", () => {
    fc.assert(
      fc.property(arbInput, (input) => {
        const marginal = compareRoute({ ...input, mode: "MARGINAL" })
        const full = compareRoute({ ...input, mode: "FULL" })
        expect(full.fleetMinor).toBeGreaterThanOrEqual(marginal.fleetMinor)
        expect(full.breakdown.slice(0, 3)).toEqual(marginal.breakdown)
      }),
      { numRuns: 300 }
    )
  })

  it("the hybrid costs no more than the cheaper pure option, and its stops account for its cost", () => {
    fc.assert(
      fc.property(arbInput, (input) => {
        const result = compareRoute(input)
        const cheaper = Math.min(result.fleetMinor, result.courierProjectedMinor)
        expect(result.hybridSavingMinor).toBeGreaterThanOrEqual(0)
        expect(cheaper - result.hybridSavingMinor).toBeLessThanOrEqual(cheaper)
        if (result.hybridStops.length > 0) {
          expect(result.hybridStops.length).toBeLessThan(input.stops.length)
          // Each move saves its marginal fleet cost and pays its courier price.
          const hybrid = result.hybridStops.reduce((cost, s) => cost - s.fleetMinor + s.courierMinor, result.fleetMinor)
          expect(hybrid).toBe(cheaper - result.hybridSavingMinor)
          for (const s of result.hybridStops) expect(s.courierMinor).toBeLessThan(s.fleetMinor)
        } else {
          expect(result.hybridSavingMinor).toBe(0)
        }
      }),
      { numRuns: 300 }
    )
  })

  it("the verdict is the cheapest option, ties going to FLEET then HYBRID", () => {
    fc.assert(
      fc.property(arbInput, (input) => {
        const result = compareRoute(input)
        const costs = costOf(result)
        const chosen = costs[result.verdict]!
        for (const [option, cost] of Object.entries(costs)) {
          if (cost === undefined) continue
          expect(chosen).toBeLessThanOrEqual(cost)
          if (cost === chosen) {
            const order = ["FLEET", "HYBRID", "COURIER"]
            expect(order.indexOf(result.verdict)).toBeLessThanOrEqual(order.indexOf(option))
          }
        }
        expect(result.savingMinor).toBe(result.courierProjectedMinor - result.fleetMinor)
      }),
      { numRuns: 300 }
    )
  })

  it("break-even is the smallest stop count at which the fleet is strictly cheaper", () => {
    fc.assert(
      fc.property(arbInput, (input) => {
        const result = compareRoute(input)
        // The linear model: n stops like the route's average, fixed part F, marginal sum M, courier Q.
        const n = input.stops.length
        const M = stopMarginals(input).reduce((sum, m) => sum + m, 0)
        const F = Math.max(0, result.fleetMinor - M)
        const Q = result.courierProjectedMinor
        const fleetCheaperAt = (N: number) => n * F + N * M < N * Q
        if (result.breakEvenStops === null) {
          expect(Q).toBeLessThanOrEqual(M)
        } else {
          expect(fleetCheaperAt(result.breakEvenStops)).toBe(true)
          if (result.breakEvenStops > 1) expect(fleetCheaperAt(result.breakEvenStops - 1)).toBe(false)
        }
      }),
      { numRuns: 300 }
    )
  })

  it("skipping stops that cannot win never changes the greedy split", () => {
    fc.assert(
      fc.property(arbInput, fc.integer({ min: 0, max: 3 }), (input, scale) => {
        // Cheaper couriers (scale 0) make many stops move; dearer ones few.
        const scaled = { ...input, prices: input.prices.map((p) => p && { ...p, amountMinor: Math.floor(p.amountMinor * scale / 3) }) }
        expect(greedySplit(scaled, { prune: true })).toEqual(greedySplit(scaled, { prune: false }))
      }),
      { numRuns: 300 }
    )
  })

  it("every output is an integer where the spec says integer", () => {
    fc.assert(
      fc.property(arbInput, (input) => {
        const r = compareRoute(input)
        for (const v of [r.fleetMinor, r.fleetPerKmMinor, r.courierProjectedMinor, r.pricedStops, r.unpricedStops, r.estimatedStops, r.savingMinor, r.hybridSavingMinor, r.co2Grams]) {
          expect(Number.isSafeInteger(v)).toBe(true)
        }
        for (const c of r.breakdown) expect(Number.isSafeInteger(c.amountMinor)).toBe(true)
        for (const s of r.hybridStops) expect(Number.isSafeInteger(s.courierMinor) && Number.isSafeInteger(s.fleetMinor)).toBe(true)
        expect(r.breakEvenStops === null || Number.isSafeInteger(r.breakEvenStops)).toBe(true)
        expect(Math.round(r.estimatedPercent * 10)).toBeCloseTo(r.estimatedPercent * 10, 9)
      }),
      { numRuns: 300 }
    )
  })
})
