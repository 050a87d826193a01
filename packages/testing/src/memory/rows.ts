import { Effect, Option } from "effect"
import { fieldConditions, type FilterSchema, type MatchKind, ownCondition, type OwnConditions } from "@opsplatform/core/shared/filters"
import { type CursorKey, type Page, type PageRequest, pageFromArray } from "@opsplatform/core/shared/pagination"
import type { TenantSingleton } from "@opsplatform/core/shared/tables"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import type { MemoryStore } from "./MemoryStore.ts"

/** A row of a memory table, stamped with its tenant like the SQL tables' columns. */
export type Scoped<A> = A & { readonly organization_id: string; readonly environment: Tenant["environment"] }

export const inTenant = (tenant: Tenant) => (row: { organization_id: string; environment: string }) =>
  row.organization_id === tenant.organizationId && row.environment === tenant.environment

/** The keyset of the one list order: created_at, then id. */
export const keyOf = (row: { created_at: string; id: string }): CursorKey => ({ createdAt: row.created_at, id: row.id })

/**
 * The memory twin of core's `tenantTable`: one table of one tenant's rows,
 * keyed by id. Every read and write takes the tenant; a row of another
 * tenant is never returned, changed or removed.
 */
export interface MemoryTenantTable<A extends { readonly id: string }> {
  readonly rows: Map<string, Scoped<A>>
  readonly find: (tenant: Tenant, id: string) => Option.Option<A>
  readonly filter: (tenant: Tenant, predicate?: (row: A) => boolean) => Array<A>
  /** A list page, newest first, of the tenant's rows that meet every condition. */
  readonly page: (tenant: Tenant, conditions: ReadonlyArray<(row: A) => boolean>, page: PageRequest) => Page<A>
  readonly insert: (tenant: Tenant, row: A) => void
  /** Replaces the tenant's row with the same id; whether there was one. */
  readonly update: (tenant: Tenant, row: A) => boolean
  readonly remove: (tenant: Tenant, id: string) => boolean
}

export const memoryTenantTable = <A extends { readonly id: string; readonly created_at: string }>(
  store: MemoryStore["Service"],
  name: string
): MemoryTenantTable<A> => {
  const rows = store.table<Scoped<A>>(name)
  const plain = ({ environment: _e, organization_id: _o, ...row }: Scoped<A>): A => row as unknown as A
  const scoped = (tenant: Tenant, row: A): Scoped<A> => ({
    ...row,
    organization_id: tenant.organizationId,
    environment: tenant.environment
  })
  const mine = (tenant: Tenant, id: string) => Option.filter(Option.fromNullishOr(rows.get(id)), inTenant(tenant))
  const filter = (tenant: Tenant, predicate: (row: A) => boolean = () => true) =>
    [...rows.values()].filter(inTenant(tenant)).map(plain).filter(predicate)
  return {
    rows,
    find: (tenant, id) => Option.map(mine(tenant, id), plain),
    filter,
    page: (tenant, conditions, page) => pageFromArray(page, filter(tenant, (row) => conditions.every((c) => c(row))), keyOf),
    insert: (tenant, row) => void rows.set(row.id, scoped(tenant, row)),
    update: (tenant, row) => {
      if (Option.isNone(mine(tenant, row.id))) return false
      rows.set(row.id, scoped(tenant, row))
      return true
    },
    remove: (tenant, id) => Option.isSome(mine(tenant, id)) && rows.delete(id)
  }
}

/** Rows in id order, as the SQL stores lock and return them. */
export const sortedById = <A extends { readonly id: string }>(rows: Array<A>): Array<A> =>
  rows.sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** A cell of a row, by column: the record's field of that name. */
const cell = (row: unknown, column: string): unknown => (row as Readonly<Record<string, unknown>>)[column]

/** An ordering of dates and instants as the database orders them (a date is its UTC midnight). */
const time = (v: unknown): number => Date.parse(String(v))

/** The memory twin of each SQL match of `filterConditions` (core `tables.ts`); a null cell meets no comparison, as in SQL. */
const memoryMatches: { readonly [K in Exclude<MatchKind, "own">]: (cell: unknown, value: unknown) => boolean } = {
  equals: (cell, value) => cell === value,
  from: (cell, value) => cell != null && time(cell) >= time(value),
  to: (cell, value) => cell != null && time(cell) <= time(value),
  before: (cell, value) => cell != null && time(cell) < time(value),
  contains: (cell, value) => typeof cell === "string" && cell.toLowerCase().includes(String(value).toLowerCase()),
  present: (cell, value) => (cell != null) === value
}

/** A list filter's conditions on memory rows: the memory twin of core's `filterConditions`. */
export const filterPredicates = <S extends FilterSchema, A>(
  schema: S,
  value: S["Type"],
  own?: OwnConditions<S["Type"], (row: A) => boolean>
): Array<(row: A) => boolean> =>
  fieldConditions(schema, value).flatMap((c) => {
    const kind = c.kind
    const condition = kind === "own" ? ownCondition(own, c) : (row: A) => memoryMatches[kind](cell(row, c.column), c.value)
    return condition === undefined ? [] : [condition]
  })

/**
 * The memory twin of core's `tenantSingleton`: at most one row per tenant,
 * replaced whole. Rows are kept as JSON, as the database keeps them, so a
 * caller's later mutation never reaches the store.
 */
export const memoryTenantSingleton = <A>(store: MemoryStore["Service"], name: string): TenantSingleton<A> => {
  const rows = store.table<string>(name)
  const key = (tenant: Tenant) => `${tenant.organizationId}/${tenant.environment}`
  return {
    find: (tenant) => Effect.sync(() => Option.map(Option.fromNullishOr(rows.get(key(tenant))), (json): A => JSON.parse(json))),
    save: (tenant, row) => Effect.sync(() => void rows.set(key(tenant), JSON.stringify(row)))
  }
}
