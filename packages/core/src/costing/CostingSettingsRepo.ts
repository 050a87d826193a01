import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { orDie } from "../shared/sql.ts"
import type { Tenant } from "../shared/tenant.ts"
import { toIso } from "../shared/time.ts"
import type { FleetCostProfile, RateCard, SenderAddress } from "./model.ts"

/**
 * Storage port for what the cost comparison needs besides the route: the
 * tenant's fleet cost profile, courier rate card and sender address. Each is
 * one record per tenant, replaced whole.
 */
export class CostingSettingsRepo extends Context.Service<CostingSettingsRepo, {
  readonly findProfile: (tenant: Tenant) => Effect.Effect<Option.Option<FleetCostProfile>>
  readonly saveProfile: (tenant: Tenant, profile: FleetCostProfile) => Effect.Effect<void>
  readonly findRateCard: (tenant: Tenant) => Effect.Effect<Option.Option<RateCard>>
  readonly saveRateCard: (tenant: Tenant, card: RateCard) => Effect.Effect<void>
  readonly findSender: (tenant: Tenant) => Effect.Effect<Option.Option<SenderAddress>>
  readonly saveSender: (tenant: Tenant, sender: SenderAddress) => Effect.Effect<void>
}>()("@opsplatform/core/costing/CostingSettingsRepo") {
  static readonly layerSql: Layer.Layer<CostingSettingsRepo, never, SqlClient.SqlClient> = Layer.effect(
    CostingSettingsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const tenantIs = (t: Tenant) => sql`organization_id = ${t.organizationId} AND environment = ${t.environment}`
      const one = <A>(rows: ReadonlyArray<unknown>, decode: (r: any) => A) => Option.map(Option.fromNullishOr(rows[0]), decode)
      const decodeProfile = (r: any): FleetCostProfile => ({
        currency: r.currency,
        fuel_consumption_l_per_100km: Number(r.fuel_consumption_l_per_100km),
        fuel_price_per_litre_minor: Number(r.fuel_price_per_litre_minor),
        driver_cost_per_hour_minor: Number(r.driver_cost_per_hour_minor),
        tolls_per_km_minor: Number(r.tolls_per_km_minor),
        depreciation_per_km_minor: Number(r.depreciation_per_km_minor),
        insurance_per_year_minor: Number(r.insurance_per_year_minor),
        annual_km: r.annual_km === null ? null : Number(r.annual_km),
        maintenance_per_km_minor: Number(r.maintenance_per_km_minor),
        tyres_per_km_minor: Number(r.tyres_per_km_minor),
        co2_grams_per_litre: Number(r.co2_grams_per_litre),
        updated_at: toIso(r.updated_at)
      })
      return CostingSettingsRepo.of({
        findProfile: (tenant) =>
          orDie(sql`SELECT * FROM fleet_cost_profiles WHERE ${tenantIs(tenant)}`).pipe(
            Effect.map((rows) => one(rows, decodeProfile))
          ),
        saveProfile: (tenant, p) =>
          orDie(sql`INSERT INTO fleet_cost_profiles (organization_id, environment, currency,
              fuel_consumption_l_per_100km, fuel_price_per_litre_minor, driver_cost_per_hour_minor, tolls_per_km_minor,
              depreciation_per_km_minor, insurance_per_year_minor, annual_km, maintenance_per_km_minor,
              tyres_per_km_minor, co2_grams_per_litre, updated_at)
            VALUES (${tenant.organizationId}, ${tenant.environment}, ${p.currency}, ${p.fuel_consumption_l_per_100km},
              ${p.fuel_price_per_litre_minor}, ${p.driver_cost_per_hour_minor}, ${p.tolls_per_km_minor},
              ${p.depreciation_per_km_minor}, ${p.insurance_per_year_minor}, ${p.annual_km},
              ${p.maintenance_per_km_minor}, ${p.tyres_per_km_minor}, ${p.co2_grams_per_litre}, ${p.updated_at})
            ON CONFLICT (organization_id, environment) DO UPDATE SET currency = EXCLUDED.currency,
              fuel_consumption_l_per_100km = EXCLUDED.fuel_consumption_l_per_100km,
              fuel_price_per_litre_minor = EXCLUDED.fuel_price_per_litre_minor,
              driver_cost_per_hour_minor = EXCLUDED.driver_cost_per_hour_minor,
              tolls_per_km_minor = EXCLUDED.tolls_per_km_minor,
              depreciation_per_km_minor = EXCLUDED.depreciation_per_km_minor,
              insurance_per_year_minor = EXCLUDED.insurance_per_year_minor, annual_km = EXCLUDED.annual_km,
              maintenance_per_km_minor = EXCLUDED.maintenance_per_km_minor,
              tyres_per_km_minor = EXCLUDED.tyres_per_km_minor, co2_grams_per_litre = EXCLUDED.co2_grams_per_litre,
              updated_at = EXCLUDED.updated_at`).pipe(Effect.asVoid),
        findRateCard: (tenant) =>
          orDie(sql`SELECT * FROM courier_rate_cards WHERE ${tenantIs(tenant)}`).pipe(
            Effect.map((rows) =>
              one(rows, (r): RateCard => ({ currency: r.currency, couriers: r.couriers, updated_at: toIso(r.updated_at) }))
            )
          ),
        saveRateCard: (tenant, card) =>
          orDie(sql`INSERT INTO courier_rate_cards (organization_id, environment, currency, couriers, updated_at)
            VALUES (${tenant.organizationId}, ${tenant.environment}, ${card.currency},
              ${JSON.stringify(card.couriers)}::jsonb, ${card.updated_at})
            ON CONFLICT (organization_id, environment) DO UPDATE SET currency = EXCLUDED.currency,
              couriers = EXCLUDED.couriers, updated_at = EXCLUDED.updated_at`).pipe(Effect.asVoid),
        findSender: (tenant) =>
          orDie(sql`SELECT * FROM sender_addresses WHERE ${tenantIs(tenant)}`).pipe(
            Effect.map((rows) => one(rows, (r): SenderAddress => ({ ...r.address, updated_at: toIso(r.updated_at) })))
          ),
        saveSender: (tenant, { updated_at, ...address }) =>
          orDie(sql`INSERT INTO sender_addresses (organization_id, environment, address, updated_at)
            VALUES (${tenant.organizationId}, ${tenant.environment}, ${JSON.stringify(address)}::jsonb, ${updated_at})
            ON CONFLICT (organization_id, environment) DO UPDATE SET address = EXCLUDED.address,
              updated_at = EXCLUDED.updated_at`).pipe(Effect.asVoid)
      })
    })
  )
}
