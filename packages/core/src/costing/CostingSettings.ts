import { Context, Effect, Layer, Option } from "effect"
import { normalizeAddress } from "../routes/model.ts"
import { NotFound, ValidationFailed } from "../shared/errors.ts"
import type { Tenant } from "../shared/tenant.ts"
import { nowIso } from "../shared/time.ts"
import { CostingSettingsRepo } from "./CostingSettingsRepo.ts"
import {
  DEFAULT_CO2_GRAMS_PER_LITRE,
  type FleetCostProfile,
  type FleetCostProfileInput,
  type RateCard,
  type RateCardInput,
  type SenderAddress,
  type SenderAddressInput
} from "./model.ts"

const profileIssues = (input: FleetCostProfileInput) =>
  (input.insurance_per_year_minor ?? 0) > 0 && (input.annual_km ?? null) === null
    ? [{ field: "annual_km", issue: "is required when insurance_per_year_minor is set: it spreads the insurance over the km driven" }]
    : []

const rateCardIssues = (input: RateCardInput) => {
  const issues: Array<{ field: string; issue: string }> = []
  const names = new Set<string>()
  input.couriers.forEach((courier, i) => {
    const name = courier.name.trim().toLowerCase()
    if (names.has(name)) issues.push({ field: `couriers.${i}.name`, issue: "is already used by another courier of the card" })
    names.add(name)
    const unordered = courier.bands.findIndex((band, j) => j > 0 && band.up_to_km <= courier.bands[j - 1]!.up_to_km)
    if (unordered !== -1) {
      issues.push({ field: `couriers.${i}.bands.${unordered}.up_to_km`, issue: "bands must be listed by increasing up_to_km" })
    }
  })
  return issues
}

/**
 * The organization's inputs to the cost comparison: the fleet cost profile,
 * the courier rate card and the sender address couriers collect from. Each is
 * replaced whole by a PUT; reading one that was never set is a 404.
 */
export class CostingSettings extends Context.Service<CostingSettings, {
  readonly getProfile: (tenant: Tenant) => Effect.Effect<FleetCostProfile, NotFound>
  readonly putProfile: (tenant: Tenant, input: FleetCostProfileInput) => Effect.Effect<FleetCostProfile, ValidationFailed>
  readonly getRateCard: (tenant: Tenant) => Effect.Effect<RateCard, NotFound>
  readonly putRateCard: (tenant: Tenant, input: RateCardInput) => Effect.Effect<RateCard, ValidationFailed>
  readonly getSender: (tenant: Tenant) => Effect.Effect<SenderAddress, NotFound>
  readonly putSender: (tenant: Tenant, input: SenderAddressInput) => Effect.Effect<SenderAddress>
}>()("@opsplatform/core/costing/CostingSettings") {
  static readonly layer: Layer.Layer<CostingSettings, never, CostingSettingsRepo> = Layer.effect(
    CostingSettings,
    Effect.gen(function*() {
      const repo = yield* CostingSettingsRepo
      const orNotFound = <A>(resource: string, tenant: Tenant) => (found: Option.Option<A>) =>
        Option.match(found, {
          onNone: () => Effect.fail(new NotFound({ resource, id: tenant.organizationId })),
          onSome: Effect.succeed
        })
      return CostingSettings.of({
        getProfile: (tenant) => Effect.flatMap(repo.findProfile(tenant), orNotFound("fleet cost profile", tenant)),
        putProfile: Effect.fn("CostingSettings.putProfile")(function*(tenant, input) {
          const issues = profileIssues(input)
          if (issues.length > 0) return yield* new ValidationFailed({ details: issues })
          const profile: FleetCostProfile = {
            currency: input.currency,
            fuel_consumption_l_per_100km: input.fuel_consumption_l_per_100km,
            fuel_price_per_litre_minor: input.fuel_price_per_litre_minor,
            driver_cost_per_hour_minor: input.driver_cost_per_hour_minor,
            tolls_per_km_minor: input.tolls_per_km_minor ?? 0,
            depreciation_per_km_minor: input.depreciation_per_km_minor ?? 0,
            insurance_per_year_minor: input.insurance_per_year_minor ?? 0,
            annual_km: input.annual_km ?? null,
            maintenance_per_km_minor: input.maintenance_per_km_minor ?? 0,
            tyres_per_km_minor: input.tyres_per_km_minor ?? 0,
            co2_grams_per_litre: input.co2_grams_per_litre ?? DEFAULT_CO2_GRAMS_PER_LITRE,
            updated_at: yield* nowIso
          }
          yield* repo.saveProfile(tenant, profile)
          return profile
        }),
        getRateCard: (tenant) => Effect.flatMap(repo.findRateCard(tenant), orNotFound("courier rate card", tenant)),
        putRateCard: Effect.fn("CostingSettings.putRateCard")(function*(tenant, input) {
          const issues = rateCardIssues(input)
          if (issues.length > 0) return yield* new ValidationFailed({ details: issues })
          const card: RateCard = {
            currency: input.currency,
            couriers: input.couriers.map((c) => ({ name: c.name.trim(), bands: c.bands.map((b) => ({ ...b })) })),
            updated_at: yield* nowIso
          }
          yield* repo.saveRateCard(tenant, card)
          return card
        }),
        getSender: (tenant) => Effect.flatMap(repo.findSender(tenant), orNotFound("sender address", tenant)),
        putSender: Effect.fn("CostingSettings.putSender")(function*(tenant, input) {
          const sender: SenderAddress = { name: input.name.trim(), ...normalizeAddress(input), updated_at: yield* nowIso }
          yield* repo.saveSender(tenant, sender)
          return sender
        })
      })
    })
  )
}
