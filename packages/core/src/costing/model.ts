import { Schema } from "effect"
import { Address, AddressInput, Thousandths } from "../routes/model.ts"
import { CurrencyCode, IsoDateTime, NonBlankString } from "../shared/schemas.ts"

/** CO2e of a litre of diesel, well-to-wheel (DESNZ 2025 conversion factors), grams. */
export const DEFAULT_CO2_GRAMS_PER_LITRE = 3197

const MinorAmount = (description: string) =>
  Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1_000_000_000 })).annotate({ description })

/** What running the organization's own vehicles costs; the input of the fleet side of the comparison. */
export const FleetCostProfile = Schema.Struct({
  currency: Schema.String,
  fuel_consumption_l_per_100km: Schema.Number,
  fuel_price_per_litre_minor: Schema.Int,
  driver_cost_per_hour_minor: Schema.Int,
  tolls_per_km_minor: Schema.Int,
  depreciation_per_km_minor: Schema.Int,
  insurance_per_year_minor: Schema.Int,
  annual_km: Schema.NullOr(Schema.Int),
  maintenance_per_km_minor: Schema.Int,
  tyres_per_km_minor: Schema.Int,
  co2_grams_per_litre: Schema.Int,
  updated_at: IsoDateTime
}).annotate({ identifier: "FleetCostProfile" })
export type FleetCostProfile = typeof FleetCostProfile.Type

export const FleetCostProfileInput = Schema.Struct({
  currency: CurrencyCode,
  fuel_consumption_l_per_100km: Thousandths(100).annotate({ description: "Litres per 100 km, up to three decimals" }),
  fuel_price_per_litre_minor: MinorAmount("Fuel price per litre, minor units"),
  driver_cost_per_hour_minor: MinorAmount("Driver cost per hour, minor units"),
  tolls_per_km_minor: Schema.optionalKey(MinorAmount("Tolls per km driven, minor units (default 0)")),
  depreciation_per_km_minor: Schema.optionalKey(MinorAmount("Depreciation per km, minor units (default 0; FULL mode)")),
  insurance_per_year_minor: Schema.optionalKey(MinorAmount("Insurance per year, minor units (default 0; FULL mode)")),
  annual_km: Schema.optionalKey(Schema.NullOr(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 10_000_000 })).annotate({
      description: "Kilometres a vehicle drives a year; spreads insurance per km. Required when insurance is set"
    })
  )),
  maintenance_per_km_minor: Schema.optionalKey(MinorAmount("Maintenance per km, minor units (default 0; FULL mode)")),
  tyres_per_km_minor: Schema.optionalKey(MinorAmount("Tyres per km, minor units (default 0; FULL mode)")),
  co2_grams_per_litre: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 100_000 })).annotate({
      description: `Grams CO2e per litre of fuel (default ${DEFAULT_CO2_GRAMS_PER_LITRE}, diesel well-to-wheel)`
    })
  )
}).annotate({ identifier: "FleetCostProfileInput" })
export type FleetCostProfileInput = typeof FleetCostProfileInput.Type

export const RateBand = Schema.Struct({
  up_to_km: Schema.Number,
  per_parcel_minor: Schema.Int,
  per_kg_minor: Schema.Int
})
export type RateBand = typeof RateBand.Type

export const CourierRates = Schema.Struct({ name: Schema.String, bands: Schema.Array(RateBand) })
export type CourierRates = typeof CourierRates.Type

/** Couriers' prices by distance band from the route's start; the default source of courier prices. */
export const RateCard = Schema.Struct({
  currency: Schema.String,
  couriers: Schema.Array(CourierRates),
  updated_at: IsoDateTime
}).annotate({ identifier: "CourierRateCard" })
export type RateCard = typeof RateCard.Type

export const RateCardInput = Schema.Struct({
  currency: CurrencyCode,
  couriers: Schema.Array(Schema.Struct({
    name: NonBlankString(60),
    bands: Schema.Array(Schema.Struct({
      up_to_km: Thousandths(100_000).check(Schema.isGreaterThan(0)).annotate({
        description: "The band covers stops up to this distance (km) from the route's start"
      }),
      per_parcel_minor: MinorAmount("Price per parcel, minor units"),
      per_kg_minor: MinorAmount("Price per kg, minor units")
    })).check(Schema.isMinLength(1), Schema.isMaxLength(20))
  })).check(Schema.isMinLength(1), Schema.isMaxLength(20))
}).annotate({ identifier: "CourierRateCardInput" })
export type RateCardInput = typeof RateCardInput.Type

/** Where couriers collect the parcels; without it they cannot quote. */
export const SenderAddress = Schema.Struct({
  name: Schema.String,
  ...Address.fields,
  updated_at: IsoDateTime
}).annotate({ identifier: "SenderAddress" })
export type SenderAddress = typeof SenderAddress.Type

export const SenderAddressInput = Schema.Struct({
  name: NonBlankString(200),
  ...AddressInput.fields
}).annotate({ identifier: "SenderAddressInput" })
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
