import { Context, Effect, Layer, Option } from "effect"
import { FleetRepo } from "../fleet/FleetRepo.ts"
import { defaultDistanceModel, driveSeconds, kmToMetres, pathMetres, roadMetres } from "../routes/geo.ts"
import { isUuid } from "../shared/schemas.ts"
import { RouteRepo } from "../routes/RouteRepo.ts"
import { NotFound, Unprocessable } from "../shared/errors.ts"
import type { Tenant } from "../shared/tenant.ts"
import { compareRoute } from "./comparison.ts"
import { CostingSettingsRepo } from "./CostingSettingsRepo.ts"
import { CourierQuotes } from "./CourierQuotes.ts"
import { fleetRates, type Trip } from "./fleetCost.ts"
import type { CostComparison, CostMode } from "./model.ts"
import { type CourierPrice, priceStops } from "./pricing.ts"

/**
 * The route cost comparison: loads the route, its stops and the tenant's
 * costing settings, asks the courier port for prices, and hands everything to
 * the pure `compareRoute`.
 *
 * The route's distance and time are its optimized totals; a route never
 * optimized (or changed since) is measured on the fly in its current stop
 * order with the same distance model the built-in optimizer uses. The fuel
 * burnt is the route's vehicle's consumption when the registry has one for
 * it, else the fleet cost profile's.
 */
export class CostComparisons extends Context.Service<CostComparisons, {
  readonly compare: (tenant: Tenant, routeId: string, mode: CostMode) => Effect.Effect<CostComparison, NotFound | Unprocessable>
}>()("@opsplatform/core/costing/CostComparisons") {
  static readonly layer: Layer.Layer<CostComparisons, never, RouteRepo | FleetRepo | CostingSettingsRepo> = Layer.effect(
    CostComparisons,
    Effect.gen(function*() {
      const routes = yield* RouteRepo
      const settings = yield* CostingSettingsRepo
      const fleet = yield* FleetRepo
      const couriers = yield* CourierQuotes
      const model = defaultDistanceModel

      return CostComparisons.of({
        compare: Effect.fn("CostComparisons.compare")(function*(tenant, routeId, mode) {
          const found = isUuid(routeId) ? yield* routes.find(tenant, routeId) : Option.none()
          if (Option.isNone(found)) return yield* new NotFound({ resource: "delivery route", id: routeId })
          const route = found.value
          const stops = yield* routes.stops(tenant, route.id)
          if (stops.length === 0) {
            return yield* new Unprocessable({ errorCode: "route_has_no_stops", reason: `Delivery route ${route.number} has no stops` })
          }
          const profile = yield* settings.findProfile(tenant)
          if (Option.isNone(profile)) {
            return yield* new Unprocessable({
              errorCode: "fleet_cost_profile_missing",
              reason: "Set the fleet cost profile (PUT /v1/fleet-cost-profile) before comparing costs"
            })
          }
          const currency = profile.value.currency
          const vehicle = route.vehicle_id === null ? Option.none() : yield* fleet.find(tenant, route.vehicle_id)
          const consumption = Option.match(vehicle, {
            onNone: () => profile.value.fuel_consumption_l_per_100km,
            onSome: (v) => v.fuel_consumption_l_per_100km ?? profile.value.fuel_consumption_l_per_100km
          })
          const rateCard = Option.getOrNull(yield* settings.findRateCard(tenant))
          if (rateCard !== null && rateCard.currency !== currency) {
            return yield* new Unprocessable({
              errorCode: "currency_mismatch",
              reason: `The courier rate card is in ${rateCard.currency} but the fleet cost profile in ${currency}`
            })
          }
          const sender = Option.getOrNull(yield* settings.findSender(tenant))
          const start = { latitude: route.start_latitude, longitude: route.start_longitude }
          const serviceSeconds = stops.reduce((sum, s) => sum + s.service_minutes * 60, 0)
          const trip: Trip = route.total_distance_km !== null && route.total_duration_minutes !== null
            ? { metres: kmToMetres(route.total_distance_km), seconds: Math.round(route.total_duration_minutes * 60) }
            : (() => {
              const metres = pathMetres(model, start, stops, route.round_trip)
              return { metres, seconds: driveSeconds(model, metres) + serviceSeconds }
            })()
          const located = stops.map((s) => ({ ...s, metresFromStart: Math.round(roadMetres(model, start, s)) }))
          const live: ReadonlyMap<string, CourierPrice> = sender === null
            ? new Map()
            : yield* couriers.quote({ tenant, currency, sender, pickup: start, rateCard, stops: located })
          return compareRoute({
            currency,
            mode,
            rates: fleetRates({ ...profile.value, fuel_consumption_l_per_100km: consumption }),
            model,
            start,
            roundTrip: route.round_trip,
            trip,
            stops: stops.map((s) => ({ ...s, serviceSeconds: s.service_minutes * 60 })),
            prices: priceStops(located, live, rateCard),
            senderMissing: sender === null
          })
        })
      })
    })
  )
}
