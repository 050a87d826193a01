import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import type { CoreLayers } from "@opsplatform/core"
import { CostingSettingsRepo } from "@opsplatform/core/costing/CostingSettingsRepo"
import type { FleetCostProfile, RateCard, SenderAddress } from "@opsplatform/core/costing/model"
import type { Ids } from "@opsplatform/core/shared/Ids"
import { freshOrganization, timestamps } from "./support.ts"

type Storage = Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>

const profile = (at: string, overrides: Partial<FleetCostProfile> = {}): FleetCostProfile => ({
  currency: "RON",
  fuel_consumption_l_per_100km: 9.125,
  fuel_price_per_litre_minor: 745,
  driver_cost_per_hour_minor: 4500,
  tolls_per_km_minor: 3,
  depreciation_per_km_minor: 41,
  insurance_per_year_minor: 350_000,
  annual_km: 45_000,
  maintenance_per_km_minor: 12,
  tyres_per_km_minor: 4,
  co2_grams_per_litre: 3197,
  updated_at: at,
  ...overrides
})

/** The CostingSettingsRepo contract: every implementation must pass it unchanged. */
export const costingSettingsRepoConformance = (name: string, storage: Storage) =>
  describe(`CostingSettingsRepo conformance: ${name}`, () => {
    layer(storage, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("keeps one profile, rate card and sender address per tenant, replaced whole", () =>
        Effect.gen(function*() {
          const repo = yield* CostingSettingsRepo
          const org = yield* freshOrganization
          const other = yield* freshOrganization
          const [t0, t1] = timestamps(2)
          assert.isTrue(Option.isNone(yield* repo.findProfile(org.live)))
          yield* repo.saveProfile(org.live, profile(t0!))
          yield* repo.saveProfile(org.live, profile(t1!, { annual_km: null, insurance_per_year_minor: 0, currency: "EUR" }))
          assert.deepStrictEqual(yield* repo.findProfile(org.live), Option.some(profile(t1!, { annual_km: null, insurance_per_year_minor: 0, currency: "EUR" })))
          const card: RateCard = {
            currency: "RON",
            couriers: [{ name: "Cargus", bands: [{ up_to_km: 12.5, per_parcel_minor: 1500, per_kg_minor: 120 }] }],
            updated_at: t0!
          }
          yield* repo.saveRateCard(org.live, card)
          assert.deepStrictEqual(yield* repo.findRateCard(org.live), Option.some(card))
          const sender: SenderAddress = {
            name: "Depozit Nord",
            line1: "Str. Depozitului 1",
            line2: null,
            postal_code: "077190",
            city: "Voluntari",
            region: "Ilfov",
            country: "RO",
            updated_at: t0!
          }
          yield* repo.saveSender(org.live, sender)
          assert.deepStrictEqual(yield* repo.findSender(org.live), Option.some(sender))
          for (const t of [org.sandbox, other.live]) {
            assert.isTrue(Option.isNone(yield* repo.findProfile(t)))
            assert.isTrue(Option.isNone(yield* repo.findRateCard(t)))
            assert.isTrue(Option.isNone(yield* repo.findSender(t)))
          }
        }))
    })
  })

