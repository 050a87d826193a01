import { Context, Effect, Layer, type Option, Schema, SchemaTransformation, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { Json, Numeric, Timestamp } from "../shared/columns.ts"
import { type TenantSingleton, tenantSingleton } from "../shared/tables.ts"
import type { Tenant, TenantScoped } from "../shared/tenant.ts"
import { CourierRates, FleetCostProfile, RateCard, SenderAddress } from "./model.ts"

/** A stored profile: its amounts are bigint and its consumption numeric columns. */
export const FleetCostProfileRow = FleetCostProfile.mapFields(Struct.assign({
  fuel_consumption_l_per_100km: Numeric,
  fuel_price_per_litre_minor: Numeric,
  driver_cost_per_hour_minor: Numeric,
  tolls_per_km_minor: Numeric,
  depreciation_per_km_minor: Numeric,
  insurance_per_year_minor: Numeric,
  maintenance_per_km_minor: Numeric,
  tyres_per_km_minor: Numeric,
  updated_at: Timestamp
}))

export const RateCardRow = RateCard.mapFields(Struct.assign({
  couriers: Json(Schema.Array(CourierRates)),
  updated_at: Timestamp
}))

const SenderFields = SenderAddress.mapFields(Struct.omit(["updated_at"]))

/** A stored sender address: the address as one jsonb column beside its time. */
export const SenderAddressRow = Schema.Struct({ address: Json(SenderFields), updated_at: Timestamp }).pipe(
  Schema.decodeTo(
    SenderAddress,
    SchemaTransformation.transform({
      decode: ({ address, updated_at }) => ({ ...address, updated_at }),
      encode: ({ updated_at, ...address }) => ({ address, updated_at })
    })
  )
)

/**
 * Storage port for what the cost comparison needs besides the route: the
 * tenant's fleet cost profile, courier rate card and sender address. Each is
 * one record per tenant, replaced whole.
 */
export class CostingSettingsRepo extends Context.Service<CostingSettingsRepo, TenantScoped<{
  readonly findProfile: (tenant: Tenant) => Effect.Effect<Option.Option<FleetCostProfile>>
  readonly saveProfile: (tenant: Tenant, profile: FleetCostProfile) => Effect.Effect<void>
  readonly findRateCard: (tenant: Tenant) => Effect.Effect<Option.Option<RateCard>>
  readonly saveRateCard: (tenant: Tenant, card: RateCard) => Effect.Effect<void>
  readonly findSender: (tenant: Tenant) => Effect.Effect<Option.Option<SenderAddress>>
  readonly saveSender: (tenant: Tenant, sender: SenderAddress) => Effect.Effect<void>
}>>()("@opsplatform/core/costing/CostingSettingsRepo") {
  /** The port over one singleton table per setting; the SQL layer and its memory twin differ only in the tables. */
  static readonly fromTables = (tables: {
    readonly profiles: TenantSingleton<FleetCostProfile>
    readonly cards: TenantSingleton<RateCard>
    readonly senders: TenantSingleton<SenderAddress>
  }): CostingSettingsRepo["Service"] =>
    CostingSettingsRepo.of({
      findProfile: tables.profiles.find,
      saveProfile: tables.profiles.save,
      findRateCard: tables.cards.find,
      saveRateCard: tables.cards.save,
      findSender: tables.senders.find,
      saveSender: tables.senders.save
    })

  static readonly layerSql: Layer.Layer<CostingSettingsRepo, never, SqlClient.SqlClient> = Layer.effect(
    CostingSettingsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return CostingSettingsRepo.fromTables({
        profiles: tenantSingleton(sql, { name: "fleet_cost_profiles", row: FleetCostProfileRow }),
        cards: tenantSingleton(sql, { name: "courier_rate_cards", row: RateCardRow }),
        senders: tenantSingleton(sql, { name: "sender_addresses", row: SenderAddressRow })
      })
    })
  )
}
