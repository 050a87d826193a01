import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie } from "../shared/sql.ts"
import { keysetPage } from "../shared/sqlPage.ts"
import type { Tenant } from "../shared/tenant.ts"
import { toIso } from "../shared/time.ts"
import type { Contract } from "./model.ts"

/** Storage port for contracts. */
export class ContractRepo extends Context.Service<ContractRepo, {
  readonly insert: (tenant: Tenant, contract: Contract) => Effect.Effect<void>
  readonly update: (tenant: Tenant, contract: Contract) => Effect.Effect<void>
  readonly find: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<Contract>>
  readonly list: (tenant: Tenant, page: PageRequest) => Effect.Effect<Page<Contract>>
}>()("@opsplatform/core/contracts/ContractRepo") {
  static readonly layerSql: Layer.Layer<ContractRepo, never, SqlClient.SqlClient> = Layer.effect(
    ContractRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const decode = (r: any): Contract => ({
        id: r.id,
        name: r.name,
        created_at: toIso(r.created_at),
        updated_at: toIso(r.updated_at)
      })
      const tenantIs = (t: Tenant) => sql`organization_id = ${t.organizationId} AND environment = ${t.environment}`
      return ContractRepo.of({
        insert: (tenant, c) =>
          orDie(sql`INSERT INTO contracts (id, organization_id, environment, name, created_at, updated_at)
            VALUES (${c.id}, ${tenant.organizationId}, ${tenant.environment}, ${c.name}, ${c.created_at}, ${c.updated_at})`)
            .pipe(Effect.asVoid),
        update: (tenant, c) =>
          orDie(sql`UPDATE contracts SET name = ${c.name}, updated_at = ${c.updated_at}
            WHERE id = ${c.id} AND ${tenantIs(tenant)}`).pipe(Effect.asVoid),
        find: (tenant, id) =>
          orDie(sql`SELECT * FROM contracts WHERE id = ${id} AND ${tenantIs(tenant)}`).pipe(
            Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), decode))
          ),
        list: (tenant, page) => keysetPage(sql, { table: "contracts", where: tenantIs(tenant), page, decode })
      })
    })
  )
}
