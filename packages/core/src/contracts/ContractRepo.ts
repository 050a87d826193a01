import { Context, Effect, Layer, type Option, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { Timestamp } from "../shared/columns.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie } from "../shared/sql.ts"
import { tenantTable } from "../shared/tables.ts"
import type { Tenant, TenantScoped } from "../shared/tenant.ts"
import { Contract } from "./model.ts"

/** A stored contract: the resource, its timestamps as timestamptz. */
export const ContractRow = Contract.mapFields(Struct.assign({ created_at: Timestamp, updated_at: Timestamp }))

/** Storage port for contracts. */
export class ContractRepo extends Context.Service<ContractRepo, TenantScoped<{
  readonly insert: (tenant: Tenant, contract: Contract) => Effect.Effect<void>
  readonly update: (tenant: Tenant, contract: Contract) => Effect.Effect<void>
  readonly find: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<Contract>>
  readonly list: (tenant: Tenant, page: PageRequest) => Effect.Effect<Page<Contract>>
}>>()("@opsplatform/core/contracts/ContractRepo") {
  static readonly layerSql: Layer.Layer<ContractRepo, never, SqlClient.SqlClient> = Layer.effect(
    ContractRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const contracts = tenantTable(sql, { name: "contracts", row: ContractRow, fixed: ["created_at"] })
      return ContractRepo.of({
        insert: (tenant, c) => orDie(contracts.insert(tenant, c)),
        update: (tenant, c) => orDie(contracts.update(tenant, c)).pipe(Effect.asVoid),
        find: (tenant, id) => contracts.findById(tenant, id),
        list: (tenant, page) => contracts.page(tenant, [], page)
      })
    })
  )
}
