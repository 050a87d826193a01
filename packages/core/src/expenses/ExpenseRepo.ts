import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie } from "../shared/sql.ts"
import { keysetPage } from "../shared/sqlPage.ts"
import type { Tenant } from "../shared/tenant.ts"
import { toDateString, toIso } from "../shared/time.ts"
import type { Expense, ExpenseFilter } from "./model.ts"

/** Storage port for expenses. */
export class ExpenseRepo extends Context.Service<ExpenseRepo, {
  readonly insert: (tenant: Tenant, expense: Expense) => Effect.Effect<void>
  readonly update: (tenant: Tenant, expense: Expense) => Effect.Effect<void>
  readonly find: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<Expense>>
  readonly list: (tenant: Tenant, filter: ExpenseFilter, page: PageRequest) => Effect.Effect<Page<Expense>>
}>()("@opsplatform/core/expenses/ExpenseRepo") {
  static readonly layerSql: Layer.Layer<ExpenseRepo, never, SqlClient.SqlClient> = Layer.effect(
    ExpenseRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const decode = (r: any): Expense => ({
        id: r.id,
        description: r.description,
        category: r.category,
        status: r.status,
        amount: String(r.amount),
        currency: r.currency,
        expense_date: toDateString(r.expense_date),
        location_id: r.location_id,
        created_at: toIso(r.created_at),
        updated_at: toIso(r.updated_at)
      })
      const tenantIs = (t: Tenant) => sql`organization_id = ${t.organizationId} AND environment = ${t.environment}`
      return ExpenseRepo.of({
        insert: (tenant, e) =>
          orDie(sql`INSERT INTO expenses (id, organization_id, environment, description, category, status, amount,
              currency, expense_date, location_id, created_at, updated_at)
            VALUES (${e.id}, ${tenant.organizationId}, ${tenant.environment}, ${e.description}, ${e.category},
              ${e.status}, ${e.amount}::numeric, ${e.currency}, ${e.expense_date}::date, ${e.location_id},
              ${e.created_at}, ${e.updated_at})`).pipe(Effect.asVoid),
        update: (tenant, e) =>
          orDie(sql`UPDATE expenses SET description = ${e.description}, category = ${e.category}, status = ${e.status},
              amount = ${e.amount}::numeric, currency = ${e.currency}, expense_date = ${e.expense_date}::date,
              location_id = ${e.location_id}, updated_at = ${e.updated_at}
            WHERE id = ${e.id} AND ${tenantIs(tenant)}`).pipe(Effect.asVoid),
        find: (tenant, id) =>
          orDie(sql`SELECT * FROM expenses WHERE id = ${id} AND ${tenantIs(tenant)}`).pipe(
            Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), decode))
          ),
        list: (tenant, f, page) =>
          keysetPage(sql, {
            table: "expenses",
            where: sql.and([
              tenantIs(tenant),
              f.status === undefined ? sql`TRUE` : sql`status = ${f.status}`,
              f.category === undefined ? sql`TRUE` : sql`category = ${f.category}`,
              f.currency === undefined ? sql`TRUE` : sql`currency = ${f.currency}`,
              f.location_id === undefined ? sql`TRUE` : sql`location_id = ${f.location_id}`,
              f.date_from === undefined ? sql`TRUE` : sql`expense_date >= ${f.date_from}::date`,
              f.date_to === undefined ? sql`TRUE` : sql`expense_date <= ${f.date_to}::date`
            ]),
            page,
            decode
          })
      })
    })
  )
}
