import { Schema, Struct } from "effect"
import { Address, Thousandths } from "../routes/model.ts"
import { CurrencyCode, IsoDateTime, NonBlankString } from "../shared/schemas.ts"

/** CO2e of a litre of diesel, well-to-wheel (DESNZ 2025 conversion factors), grams. */
export const DEFAULT_CO2_GRAMS_PER_LITRE = 3197

const MinorAmount = (description: string) =>
  Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1_000_000_000 })).annotate({ description })

/** What running the organization's own vehicles costs; the input of the fleet side of the comparison. */
export const FleetCostProfile = Schema.Struct({
  currency: CurrencyCode,
  fuel_consumption_l_per_100km: Thousandths(100).annotate({ description: "Litres per 100 km, up to three decimals" }),
  fuel_price_per_litre_minor: MinorAmount("Fuel price per litre, minor units"),
  driver_cost_per_hour_minor: MinorAmount("Driver cost per hour, minor units"),
  tolls_per_km_minor: MinorAmount("Tolls per km driven, minor units (default 0)"),
  depreciation_per_km_minor: MinorAmount("Depreciation per km, minor units (default 0; FULL mode)"),
  insurance_per_year_minor: MinorAmount("Insurance per year, minor units (default 0; FULL mode)"),
  annual_km: Schema.NullOr(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 10_000_000 })).annotate({
      description: "Kilometres a vehicle drives a year; spreads insurance per km. Required when insurance is set"
    })
  ),
  maintenance_per_km_minor: MinorAmount("Maintenance per km, minor units (default 0; FULL mode)"),
  tyres_per_km_minor: MinorAmount("Tyres per km, minor units (default 0; FULL mode)"),
  co2_grams_per_litre: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 100_000 })).annotate({
    description: `Grams CO2e per litre of fuel (default ${DEFAULT_CO2_GRAMS_PER_LITRE}, diesel well-to-wheel)`
  }),
  updated_at: IsoDateTime
}).annotate({ identifier: "FleetCostProfile" })
export type FleetCostProfile = typeof FleetCostProfile.Type

/** The currency, fuel and driver figures are required; the other costs default to 0, the CO2 factor to diesel's. */
export const FleetCostProfileInput = FleetCostProfile.mapFields(Struct.omit(["updated_at"])).mapFields(
  Struct.mapOmit(
    ["currency", "fuel_consumption_l_per_100km", "fuel_price_per_litre_minor", "driver_cost_per_hour_minor"],
    Schema.optionalKey
  )
).annotate({ identifier: "FleetCostProfileInput" })
export type FleetCostProfileInput = typeof FleetCostProfileInput.Type

export const RateBand = Schema.Struct({
  up_to_km: Thousandths(100_000).check(Schema.isGreaterThan(0)).annotate({
    description: "The band covers stops up to this distance (km) from the route's start"
  }),
  per_parcel_minor: MinorAmount("Price per parcel, minor units"),
  per_kg_minor: MinorAmount("Price per kg, minor units")
})
export type RateBand = typeof RateBand.Type

export const CourierRates = Schema.Struct({
  name: NonBlankString(60),
  bands: Schema.Array(RateBand).check(Schema.isMinLength(1), Schema.isMaxLength(20))
})
export type CourierRates = typeof CourierRates.Type

/** Couriers' prices by distance band from the route's start; the default source of courier prices. */
export const RateCard = Schema.Struct({
  currency: CurrencyCode,
  couriers: Schema.Array(CourierRates).check(Schema.isMinLength(1), Schema.isMaxLength(20)),
  updated_at: IsoDateTime
}).annotate({ identifier: "CourierRateCard" })
export type RateCard = typeof RateCard.Type

export const RateCardInput = RateCard.mapFields(Struct.omit(["updated_at"])).annotate({ identifier: "CourierRateCardInput" })
export type RateCardInput = typeof RateCardInput.Type

/** Where couriers collect the parcels; without it they cannot quote. */
export const SenderAddress = Schema.Struct({
  name: NonBlankString(200),
  ...Address.fields,
  updated_at: IsoDateTime
}).annotate({ identifier: "SenderAddress" })
export type SenderAddress = typeof SenderAddress.Type

/** The name, street, city and country are required; the other lines may be left out (null). */
export const SenderAddressInput = SenderAddress.mapFields(Struct.omit(["updated_at"])).mapFields(
  Struct.mapOmit(["name", "line1", "city", "country"], Schema.optionalKey)
).annotate({ identifier: "SenderAddressInput" })
export type SenderAddressInput = typeof SenderAddressInput.Type

export const CostMode = Schema.Literals(["MARGINAL", "FULL"])
export type CostMode = typeof CostMode.Type

export const CostCategory = Schema.Literals(["FUEL", "DRIVER", "TOLLS", "DEPRECIATION", "INSURANCE", "MAINTENANCE", "TYRES"])
export type CostCategory = typeof CostCategory.Type

export const Verdict = Schema.Literals(["FLEET", "COURIER", "HYBRID"])
export type Verdict = typeof Verdict.Type

export const HybridStop = Schema.Struct({
  stopId: Schema.String,
  label: Schema.String,
  courier: Schema.String,
  courierMinor: Schema.Int,
  fleetMinor: Schema.Int.annotate({ description: "The stop's marginal fleet cost when it was moved to the courier" })
})
export type HybridStop = typeof HybridStop.Type

/** Own fleet versus courier for one route (the spec's fields, exactly). */
export const CostComparison = Schema.Struct({
  currency: Schema.String,
  mode: CostMode,
  fleetMinor: Schema.Int,
  fleetPerKmMinor: Schema.Int,
  estimatedPercent: Schema.Number,
  courierProjectedMinor: Schema.Int,
  pricedStops: Schema.Int,
  unpricedStops: Schema.Int,
  estimatedStops: Schema.Int,
  savingMinor: Schema.Int,
  verdict: Verdict,
  breakdown: Schema.Array(Schema.Struct({ category: CostCategory, amountMinor: Schema.Int })),
  hybridStops: Schema.Array(HybridStop),
  hybridSavingMinor: Schema.Int,
  breakEvenStops: Schema.NullOr(Schema.Int),
  co2Grams: Schema.Int,
  senderMissing: Schema.Boolean
}).annotate({ identifier: "RouteCostComparison" })
export type CostComparison = typeof CostComparison.Type
