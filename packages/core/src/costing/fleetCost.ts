import type { CostCategory, CostMode, FleetCostProfile } from "./model.ts"
import { mulDivHalfEven, roundHalfEven } from "../shared/money.ts"

/**
 * The fleet cost profile as the math reads it: integers only. Fuel
 * consumption is held in millilitres per 100 km so every category is an exact
 * ratio of integers.
 */
export interface FleetRates {
  readonly fuelMlPer100Km: number
  readonly fuelPricePerLitreMinor: number
  readonly driverCostPerHourMinor: number
  readonly tollsPerKmMinor: number
  readonly depreciationPerKmMinor: number
  readonly insurancePerYearMinor: number
  /** Required (≥ 1) when insurance is not zero. */
  readonly annualKm: number | null
  readonly maintenancePerKmMinor: number
  readonly tyresPerKmMinor: number
  readonly co2GramsPerLitre: number
}

export const fleetRates = (p: Omit<FleetCostProfile, "updated_at" | "currency">): FleetRates => ({
  fuelMlPer100Km: Math.round(p.fuel_consumption_l_per_100km * 1000),
  fuelPricePerLitreMinor: p.fuel_price_per_litre_minor,
  driverCostPerHourMinor: p.driver_cost_per_hour_minor,
  tollsPerKmMinor: p.tolls_per_km_minor,
  depreciationPerKmMinor: p.depreciation_per_km_minor,
  insurancePerYearMinor: p.insurance_per_year_minor,
  annualKm: p.annual_km,
  maintenancePerKmMinor: p.maintenance_per_km_minor,
  tyresPerKmMinor: p.tyres_per_km_minor,
  co2GramsPerLitre: p.co2_grams_per_litre
})

/** A trip as the math reads it: whole metres driven and whole seconds of driver time. */
export interface Trip {
  readonly metres: number
  readonly seconds: number
}

/**
 * One category: `quantity · a · b / denominator`, where the quantity is the
 * trip's metres (or, for the driver, its seconds).
 */
export interface CategoryTerm {
  readonly category: CostCategory
  readonly perSecond: boolean
  readonly a: number
  readonly b: number
  readonly denominator: number
  /** `a · b`, precomputed when it is a safe integer (it nearly always is). */
  readonly rate: number | undefined
  /** `a · b / denominator`: the category's cost per unit of quantity, unrounded. */
  readonly slope: number
}

const term = (category: CostCategory, perSecond: boolean, a: number, b: number, denominator: number): CategoryTerm => {
  const rate = a * b
  return {
    category,
    perSecond,
    a,
    b,
    denominator,
    rate: Number.isSafeInteger(rate) ? rate : undefined,
    slope: rate / denominator
  }
}

/**
 * The categories of a mode as exact ratios (d = km, t = minutes):
 * FUEL = d·c/100·p, DRIVER = t/60·w, TOLLS = d·τ; FULL adds
 * DEPRECIATION = d·δ, INSURANCE = d·I/A, MAINTENANCE = d·μ, TYRES = d·ρ.
 * With metres m = 1000·d, millilitres per 100 km ml = 1000·c and seconds
 * s = 60·t, each becomes a ratio of integers.
 */
export const categoryTerms = (mode: CostMode, r: FleetRates): ReadonlyArray<CategoryTerm> => {
  const terms: Array<CategoryTerm> = [
    // m/1000 · ml/1000 / 100 · p
    term("FUEL", false, r.fuelMlPer100Km, r.fuelPricePerLitreMinor, 100_000_000),
    term("DRIVER", true, r.driverCostPerHourMinor, 1, 3600),
    term("TOLLS", false, r.tollsPerKmMinor, 1, 1000)
  ]
  if (mode === "FULL") {
    terms.push(
      term("DEPRECIATION", false, r.depreciationPerKmMinor, 1, 1000),
      r.insurancePerYearMinor === 0 || r.annualKm === null
        ? term("INSURANCE", false, 0, 1, 1)
        : term("INSURANCE", false, r.insurancePerYearMinor, 1, 1000 * r.annualKm),
      term("MAINTENANCE", false, r.maintenancePerKmMinor, 1, 1000),
      term("TYRES", false, r.tyresPerKmMinor, 1, 1000)
    )
  }
  return terms
}

/** One category's amount for a quantity (metres, or seconds for the driver): its exact value rounded half to even, once. */
export const categoryAmount = (t: CategoryTerm, quantity: number): number => {
  if (t.rate !== undefined) {
    const numerator = quantity * t.rate
    if (Number.isSafeInteger(numerator)) return roundHalfEven(numerator, t.denominator)
  }
  return mulDivHalfEven(quantity, t.a, t.b, t.denominator)
}

/** Every category of the mode for a trip, each rounded once. */
export const breakdown = (
  terms: ReadonlyArray<CategoryTerm>,
  trip: Trip
): Array<{ category: CostCategory; amountMinor: number }> =>
  terms.map((t) => ({ category: t.category, amountMinor: categoryAmount(t, t.perSecond ? trip.seconds : trip.metres) }))

/** The fleet cost of `metres` driven in `seconds`: the sum of its rounded categories, so a breakdown always adds up. */
export const fleetCostOf = (terms: ReadonlyArray<CategoryTerm>, metres: number, seconds: number): number => {
  let total = 0
  for (let j = 0; j < terms.length; j++) {
    const t = terms[j]!
    total += categoryAmount(t, t.perSecond ? seconds : metres)
  }
  return total
}

export const fleetCost = (terms: ReadonlyArray<CategoryTerm>, trip: Trip): number => fleetCostOf(terms, trip.metres, trip.seconds)

/** CO2e of the fuel a trip burns, grams: d·c/100·factor, rounded half to even. */
export const co2Grams = (r: FleetRates, trip: Trip): number =>
  mulDivHalfEven(trip.metres, r.fuelMlPer100Km, r.co2GramsPerLitre, 100_000_000)
