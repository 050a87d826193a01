import { Context, Effect, Layer, type Option, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { Timestamp } from "../shared/columns.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie } from "../shared/sql.ts"
import { filterConditions, tenantTable } from "../shared/tables.ts"
import type { Tenant, TenantScoped } from "../shared/tenant.ts"
import { Subscription, SubscriptionFilter } from "./model.ts"

export const SubscriptionRow = Subscription.mapFields(Struct.assign({ created_at: Timestamp, updated_at: Timestamp }))

/** Storage port for subscriptions. */
export class SubscriptionRepo extends Context.Service<SubscriptionRepo, TenantScoped<{
  readonly insert: (tenant: Tenant, subscription: Subscription) => Effect.Effect<void>
  readonly update: (tenant: Tenant, subscription: Subscription) => Effect.Effect<void>
  /** `forUpdate` keeps the row locked until the surrounding transaction ends. */
  readonly find: (tenant: Tenant, id: string, forUpdate?: boolean) => Effect.Effect<Option.Option<Subscription>>
  readonly list: (tenant: Tenant, filter: SubscriptionFilter, page: PageRequest) => Effect.Effect<Page<Subscription>>
}>>()("@opsplatform/core/metering/SubscriptionRepo") {
  static readonly layerSql: Layer.Layer<SubscriptionRepo, never, SqlClient.SqlClient> = Layer.effect(
    SubscriptionRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const subscriptions = tenantTable(sql, {
        name: "subscriptions",
        row: SubscriptionRow,
        fixed: ["contact_id", "processor", "created_at"]
      })
      return SubscriptionRepo.of({
        insert: (tenant, s) => orDie(subscriptions.insert(tenant, s)),
        update: (tenant, s) => orDie(subscriptions.update(tenant, s)).pipe(Effect.asVoid),
        find: (tenant, id, forUpdate) => subscriptions.findById(tenant, id, { forUpdate }),
        list: (tenant, f, page) =>
          subscriptions.page(tenant, filterConditions(sql, SubscriptionFilter, f), page)
      })
    })
  )
}
