import { Effect } from "effect"
import { CostingSettings } from "@opsplatform/core/costing/CostingSettings"
import type { FleetCostProfileInput, RateCardInput, SenderAddressInput } from "@opsplatform/core/costing/model"
import type { Point } from "@opsplatform/core/routes/geo"
import type { DeliveryRouteWithStops, RouteCreate, StopCreate } from "@opsplatform/core/routes/model"
import { Routes } from "@opsplatform/core/routes/Routes"
import type { Tenant } from "@opsplatform/core/shared/tenant"

/** A depot north of Bucharest. */
export const sampleDepot: Point = { latitude: 44.4912, longitude: 26.1718 }

/** A diesel van: 9.5 l/100 km at 7.45 RON, a driver at 45 RON an hour, and the full-cost items. */
export const sampleFleetCostProfile: FleetCostProfileInput = {
  currency: "RON",
  fuel_consumption_l_per_100km: 9.5,
  fuel_price_per_litre_minor: 745,
  driver_cost_per_hour_minor: 4500,
  tolls_per_km_minor: 2,
  depreciation_per_km_minor: 40,
  insurance_per_year_minor: 350_000,
  annual_km: 40_000,
  maintenance_per_km_minor: 12,
  tyres_per_km_minor: 3
}

/** Two couriers with city and regional bands. */
export const sampleRateCard: RateCardInput = {
  currency: "RON",
  couriers: [
    {
      name: "Urban Express",
      bands: [
        { up_to_km: 10, per_parcel_minor: 1400, per_kg_minor: 60 },
        { up_to_km: 30, per_parcel_minor: 1900, per_kg_minor: 80 }
      ]
    },
    { name: "Regional Cargo", bands: [{ up_to_km: 200, per_parcel_minor: 2100, per_kg_minor: 40 }] }
  ]
}

export const sampleSenderAddress: SenderAddressInput = {
  name: "Depozit Nord",
  line1: "Str. Depozitului 1",
  postal_code: "077190",
  city: "Voluntari",
  region: "Ilfov",
  country: "RO"
}

/**
 * `count` stops spread evenly (a sunflower spiral) within `radiusKm` of
 * `center`, with 1 to 3 parcels and varied weights: the same arguments always
 * give the same stops.
 */
export const sampleStops = (
  count: number,
  options: { readonly center?: Point | undefined; readonly radiusKm?: number | undefined } = {}
): Array<StopCreate> => {
  const center = options.center ?? { latitude: 44.4268, longitude: 26.1025 }
  const radius = options.radiusKm ?? 12
  const kmPerDegree = 111.19492664455873
  return Array.from({ length: count }, (_, i) => {
    const r = radius * Math.sqrt((i + 0.5) / count)
    const angle = i * 2.399963229728653
    const latitude = center.latitude + (r * Math.sin(angle)) / kmPerDegree
    const longitude = center.longitude + (r * Math.cos(angle)) / (kmPerDegree * Math.cos((center.latitude * Math.PI) / 180))
    return {
      label: `Customer ${i + 1}`,
      latitude: Math.round(latitude * 1e6) / 1e6,
      longitude: Math.round(longitude * 1e6) / 1e6,
      parcels: 1 + (i % 3),
      weight_kg: 0.5 + (i % 5) * 1.25,
      service_minutes: 4 + (i % 4)
    }
  })
}

/** A route from the depot with `stops` sample stops (three, carrying 1 + 2 + 3 parcels, by default), as a caller sends it. */
export const sampleRoute = (overrides: Partial<RouteCreate> = {}, stops = 3): RouteCreate => ({
  name: "Morning run",
  route_date: "2026-03-02T07:00:00+02:00",
  start_latitude: sampleDepot.latitude,
  start_longitude: sampleDepot.longitude,
  stops: sampleStops(stops),
  ...overrides
})

/**
 * A route with `stops` stops from the depot, and (unless switched off) the
 * tenant's fleet cost profile, rate card and sender address: everything a
 * cost comparison needs.
 */
export const makeRouteFixture = (
  tenant: Tenant,
  options: {
    readonly stops?: number | undefined
    readonly route?: Partial<RouteCreate> | undefined
    readonly profile?: FleetCostProfileInput | null | undefined
    readonly rateCard?: RateCardInput | null | undefined
    readonly sender?: SenderAddressInput | null | undefined
  } = {}
) =>
  Effect.gen(function*() {
    const routes = yield* Routes
    const settings = yield* CostingSettings
    const profile = options.profile === undefined ? sampleFleetCostProfile : options.profile
    const rateCard = options.rateCard === undefined ? sampleRateCard : options.rateCard
    const sender = options.sender === undefined ? sampleSenderAddress : options.sender
    if (profile !== null) yield* settings.putProfile(tenant, profile)
    if (rateCard !== null) yield* settings.putRateCard(tenant, rateCard)
    if (sender !== null) yield* settings.putSender(tenant, sender)
    const route: DeliveryRouteWithStops = yield* routes.create(
      tenant,
      sampleRoute({ name: "Fixture route", ...options.route }, options.stops ?? 12)
    )
    return route
  }).pipe(Effect.orDie)
