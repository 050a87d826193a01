import { Array as Arr, Clock, Effect, Option, Schema } from "effect"
import type { SqlClient, SqlError, Statement } from "effect/sql"
import { fieldConditions, type FilterSchema, type MatchKind, ownCondition, type OwnConditions } from "./filters.ts"
import { assemblePage, type CountedTotal, EXACT_TOTAL_LIMIT, type Page, type PageRequest } from "./pagination.ts"
import { orDie } from "./sql.ts"
import type { Tenant } from "./tenant.ts"

/**
 * Tables read and written through one row schema. A repository declares its
 * row once (the record's schema, with the column codecs of `columns.ts` where
 * the stored form differs); every read decodes through it and every write
 * encodes through it, so a column is never listed by hand in a SELECT decoder,
 * an INSERT and an UPDATE.
 *
 * `tenantTable` adds the tenant rule (docs/decisions.md, "Design: core shape": every repository call takes the
 * tenant): each of its statements is scoped to one organization environment,
 * and it offers no way to read or write a row without one.
 */

/** A row schema: the record, and the columns it is stored as (an object, one key a column). */
type RowSchema<A> = Schema.Codec<A, { readonly [column: string]: unknown }, never, never>

interface RowKeys {
  readonly id: string
  readonly created_at: string
}

export interface TableOptions<A> {
  readonly name: string
  readonly row: RowSchema<A>
  /**
   * What a read selects; `*` when absent. A row with derived fields (the name
   * of a related row) selects them here, and lists them in `readOnly`.
   */
  readonly select?: ((sql: SqlClient.SqlClient) => Statement.Fragment) | undefined
  /** Fields of the row that are read but never written (derived in `select`). */
  readonly readOnly?: ReadonlyArray<keyof A & string> | undefined
  /** Fields an UPDATE never changes, besides `id`. */
  readonly fixed?: ReadonlyArray<keyof A & string> | undefined
}

/** A table of rows that belong to no tenant (apps of the operator, protocol records found by hash). */
export interface Table<A> {
  readonly name: Statement.Identifier
  readonly select: Statement.Fragment
  /** Runs a statement that returns rows of this table, decoded. */
  readonly all: (statement: Statement.Statement<unknown>) => Effect.Effect<ReadonlyArray<A>>
  /** Runs a statement that returns at most one row of this table, decoded. */
  readonly one: (statement: Statement.Statement<unknown>) => Effect.Effect<Option.Option<A>>
  /** The row's writable columns, encoded. */
  readonly columns: (row: A) => Effect.Effect<Record<string, unknown>>
  readonly insert: (row: A, extra?: Record<string, unknown>) => Effect.Effect<void, SqlError.SqlError>
  /** Inserts every row in one statement; nothing for none. */
  readonly insertAll: (rows: ReadonlyArray<A>, extra?: Record<string, unknown>) => Effect.Effect<void, SqlError.SqlError>
  /** Writes every writable column but `id` and the fixed ones, to the row whose id is `row.id`. */
  readonly update: (row: A, where?: Statement.Fragment) => Effect.Effect<boolean, SqlError.SqlError>
}

export const table = <A extends { readonly id: string }>(sql: SqlClient.SqlClient, options: TableOptions<A>): Table<A> => {
  const decodeAll = Schema.decodeUnknownEffect(Schema.Array(options.row))
  const encode = Schema.encodeEffect(options.row)
  const readOnly = new Set<string>(options.readOnly ?? [])
  const fixed = ["id", ...(options.fixed ?? [])]
  const name = sql(options.name)
  const select = options.select?.(sql) ?? sql`*`

  const all = (statement: Statement.Statement<unknown>) =>
    orDie(statement).pipe(Effect.flatMap((rows) => Effect.orDie(decodeAll(rows))))
  const columns = (row: A) =>
    Effect.orDie(encode(row)).pipe(
      Effect.map((encoded) => {
        const out: Record<string, unknown> = {}
        for (const [key, value] of Object.entries(encoded as Record<string, unknown>)) {
          if (!readOnly.has(key)) out[key] = value
        }
        return out
      })
    )
  return {
    name,
    select,
    all,
    one: (statement) => Effect.map(all(statement), (rows) => Option.fromNullishOr(rows[0])),
    columns,
    insert: (row, extra) =>
      Effect.flatMap(columns(row), (values) => sql`INSERT INTO ${name} ${sql.insert({ ...values, ...extra })}`).pipe(
        Effect.asVoid
      ),
    insertAll: (rows, extra) =>
      Effect.forEach(rows, columns).pipe(
        Effect.flatMap((values) =>
          Arr.isArrayNonEmpty(values)
            ? sql`INSERT INTO ${name} ${sql.insert(Arr.map(values, (v) => ({ ...v, ...extra })))}`.pipe(Effect.asVoid)
            : Effect.void
        )
      ),
    update: (row, where) =>
      Effect.flatMap(
        columns(row),
        (values) =>
          sql`UPDATE ${name} SET ${sql.update(values, fixed)} WHERE ${sql.and([sql`id = ${row.id}`, ...(where === undefined ? [] : [where])])} RETURNING id`
      ).pipe(Effect.map((rows) => rows.length > 0))
  }
}

/** The SQL of each way a filter field matches (see `filters.ts`); `own` is the repository's. */
const sqlMatches: { readonly [K in Exclude<MatchKind, "own">]: (sql: SqlClient.SqlClient, column: Statement.Identifier, value: unknown) => Statement.Fragment } = {
  equals: (sql, column, value) => sql`${column} = ${value}`,
  from: (sql, column, value) => sql`${column} >= ${value}`,
  to: (sql, column, value) => sql`${column} <= ${value}`,
  before: (sql, column, value) => sql`${column} < ${value}`,
  contains: (sql, column, value) => sql`strpos(lower(${column}), lower(${value})) > 0`,
  present: (sql, column, value) => value === true ? sql`${column} IS NOT NULL` : sql`${column} IS NULL`
}

/**
 * A list filter's SQL conditions: one per present field, none for an absent
 * one. `own` gives the repository's condition for each field the filter
 * declares `Filters.own`.
 */
export const filterConditions = <S extends FilterSchema>(
  sql: SqlClient.SqlClient,
  schema: S,
  value: S["Type"],
  own?: OwnConditions<S["Type"], Statement.Fragment>
): Array<Statement.Fragment> =>
  fieldConditions(schema, value).flatMap((c) => {
    const condition = c.kind === "own" ? ownCondition(own, c) : sqlMatches[c.kind](sql, sql(c.column), c.value)
    return condition === undefined ? [] : [condition]
  })

export interface FindOptions {
  /** Keep the row locked until the surrounding transaction ends. */
  readonly forUpdate?: boolean | undefined
}

/** A table whose rows belong to one organization environment each (columns `organization_id`, `environment`). */
export interface TenantTable<A> {
  readonly name: Statement.Identifier
  readonly select: Statement.Fragment
  /** The tenant's rows, with any further conditions. */
  readonly where: (tenant: Tenant, conditions?: ReadonlyArray<Statement.Fragment>) => Statement.Fragment
  readonly find: (
    tenant: Tenant,
    conditions: ReadonlyArray<Statement.Fragment>,
    options?: FindOptions
  ) => Effect.Effect<Option.Option<A>>
  readonly findById: (tenant: Tenant, id: string, options?: FindOptions) => Effect.Effect<Option.Option<A>>
  /** The tenant's rows with these ids, in id order (locked until the transaction ends with `forUpdate`). */
  readonly findByIds: (tenant: Tenant, ids: ReadonlyArray<string>, options?: FindOptions) => Effect.Effect<ReadonlyArray<A>>
  readonly findAll: (
    tenant: Tenant,
    conditions: ReadonlyArray<Statement.Fragment>,
    orderBy?: Statement.Fragment
  ) => Effect.Effect<ReadonlyArray<A>>
  /** A list page, newest first (see `keysetPage`); for rows with a `created_at`. */
  readonly page: A extends RowKeys
    ? (tenant: Tenant, conditions: ReadonlyArray<Statement.Fragment>, page: PageRequest) => Effect.Effect<Page<A>>
    : never
  readonly insert: (tenant: Tenant, row: A) => Effect.Effect<void, SqlError.SqlError>
  /** Inserts every row in one statement. */
  readonly insertAll: (tenant: Tenant, rows: ReadonlyArray<A>) => Effect.Effect<void, SqlError.SqlError>
  /** Writes the tenant's row whose id is `row.id`, when it also meets `conditions`; whether there was one. */
  readonly update: (
    tenant: Tenant,
    row: A,
    conditions?: ReadonlyArray<Statement.Fragment>
  ) => Effect.Effect<boolean, SqlError.SqlError>
  /** Deletes the tenant's rows matching `conditions`; how many went. */
  readonly remove: (tenant: Tenant, conditions: ReadonlyArray<Statement.Fragment>) => Effect.Effect<number>
  /**
   * The tenant's rows, counted under a transaction-scoped lock of this table
   * and tenant: inside a transaction, an insert after the count is seen by
   * every other count waiting on the lock (a cap holds under concurrency).
   */
  readonly countLocked: (tenant: Tenant) => Effect.Effect<number>
  /** Runs a statement over this table whose rows the caller scoped with `where`, decoded. */
  readonly all: (statement: Statement.Statement<unknown>) => Effect.Effect<ReadonlyArray<A>>
  readonly one: (statement: Statement.Statement<unknown>) => Effect.Effect<Option.Option<A>>
}

/** The columns that say whose a row is. */
const owner = (tenant: Tenant) => ({ organization_id: tenant.organizationId, environment: tenant.environment })

export const tenantTable = <A extends { readonly id: string }>(
  sql: SqlClient.SqlClient,
  options: TableOptions<A>
): TenantTable<A> => {
  const base = table(sql, options)
  const where = (tenant: Tenant, conditions: ReadonlyArray<Statement.Fragment> = []) =>
    sql.and([sql`organization_id = ${tenant.organizationId}`, sql`environment = ${tenant.environment}`, ...conditions])
  const find = (tenant: Tenant, conditions: ReadonlyArray<Statement.Fragment>, options?: FindOptions) =>
    base.one(
      options?.forUpdate
        ? sql`SELECT ${base.select} FROM ${base.name} WHERE ${where(tenant, conditions)} FOR UPDATE`
        : sql`SELECT ${base.select} FROM ${base.name} WHERE ${where(tenant, conditions)}`
    )
  return {
    name: base.name,
    select: base.select,
    where,
    find,
    findById: (tenant, id, options) => find(tenant, [sql`id = ${id}`], options),
    findByIds: (tenant, ids, options) =>
      ids.length === 0 ? Effect.succeed([]) : base.all(
        sql`SELECT ${base.select} FROM ${base.name} WHERE ${where(tenant, [sql.in("id", ids)])} ORDER BY id ${
          options?.forUpdate ? sql`FOR UPDATE` : sql``
        }`
      ),
    findAll: (tenant, conditions, orderBy) =>
      base.all(
        sql`SELECT ${base.select} FROM ${base.name} WHERE ${where(tenant, conditions)} ${
          orderBy === undefined ? sql`` : sql`ORDER BY ${orderBy}`
        }`
      ),
    page: ((tenant: Tenant, conditions: ReadonlyArray<Statement.Fragment>, page: PageRequest) =>
      keysetPage(sql, {
        table: base.name,
        select: base.select,
        where: where(tenant, conditions),
        page,
        filtered: conditions.length > 0,
        // `page` exists only where A has a created_at (its type is never otherwise).
        all: base.all as unknown as (statement: Statement.Statement<unknown>) => Effect.Effect<ReadonlyArray<RowKeys>>
      })) as TenantTable<A>["page"],
    insert: (tenant, row) => base.insert(row, owner(tenant)),
    insertAll: (tenant, rows) => base.insertAll(rows, owner(tenant)),
    update: (tenant, row, conditions) => base.update(row, where(tenant, conditions)),
    remove: (tenant, conditions) =>
      orDie(sql`DELETE FROM ${base.name} WHERE ${where(tenant, conditions)} RETURNING id`).pipe(
        Effect.map((rows) => rows.length)
      ),
    countLocked: (tenant) =>
      orDie(Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${options.name}.count:${tenant.organizationId}:${tenant.environment}`}, 0))`
        const [row] = yield* sql<{ readonly count: string | number }>`SELECT count(*) AS count FROM ${base.name} WHERE ${where(tenant)}`
        return Number(row?.count ?? 0)
      })),
    all: base.all,
    one: base.one
  }
}

/**
 * A table of at most one row per tenant, keyed by the tenant itself
 * (`PRIMARY KEY (organization_id, environment)`): settings read as a whole and
 * replaced whole.
 */
export interface TenantSingleton<A> {
  readonly find: (tenant: Tenant) => Effect.Effect<Option.Option<A>>
  /** Inserts the tenant's row, or replaces every column of the one it has. */
  readonly save: (tenant: Tenant, row: A) => Effect.Effect<void>
}

export const tenantSingleton = <A>(
  sql: SqlClient.SqlClient,
  options: { readonly name: string; readonly row: RowSchema<A> }
): TenantSingleton<A> => {
  const name = sql(options.name)
  const decodeAll = Schema.decodeUnknownEffect(Schema.Array(options.row))
  const encode = Schema.encodeEffect(options.row)
  return {
    find: (tenant) =>
      orDie(sql`SELECT * FROM ${name}
        WHERE organization_id = ${tenant.organizationId} AND environment = ${tenant.environment}`).pipe(
        Effect.flatMap((rows) => Effect.orDie(decodeAll(rows))),
        Effect.map((rows) => Option.fromNullishOr(rows[0]))
      ),
    save: (tenant, row) =>
      Effect.flatMap(Effect.orDie(encode(row)), (values: Record<string, unknown>) =>
        orDie(sql`INSERT INTO ${name} ${sql.insert({ ...values, ...owner(tenant) })}
          ON CONFLICT (organization_id, environment) DO UPDATE SET ${sql.update(values)}`)).pipe(Effect.asVoid)
  }
}

/**
 * The one SQL list query: a window of `perPage + 1` rows, newest first by
 * (created_at, id), and the list's total; ids of listed tables are UUIDs.
 * With a cursor the window starts strictly after the cursor's key (keyset,
 * fast at any depth); otherwise at the page's offset, which is walked over
 * the ids alone (the tenant index covers them) before the page's rows and
 * their derived columns are read. Every list endpoint goes through here.
 *
 * The total (decided: docs/decisions.md, "What meta.total costs") is counted
 * once per walk: a cursor carries the count its first page made. The count
 * stops at `EXACT_TOTAL_LIMIT`; a longer list reports the planner's estimate
 * of its rows, flagged `totalEstimated`.
 */
export const keysetPage = <A extends RowKeys>(
  sql: SqlClient.SqlClient,
  options: {
    readonly table: Statement.Identifier
    readonly select: Statement.Fragment
    readonly where: Statement.Fragment
    readonly page: PageRequest
    readonly all: (statement: Statement.Statement<unknown>) => Effect.Effect<ReadonlyArray<A>>
    /** The list has conditions besides its owner (filters, a parent): see `window` below. */
    readonly filtered?: boolean | undefined
  }
): Effect.Effect<Page<A>> => {
  const { page, select, table: name, where } = options
  const after = page.after
  const matching = after === undefined
    ? where
    : sql`${where} AND (created_at, id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`
  const offset = after === undefined ? (page.page - 1) * page.perPage : 0
  /**
   * Newest first is an index walk that stops after the page — unless the
   * filter's rows are fewer or older than the planner believes, when it walks
   * the whole tenant (a filter matching none of a million rows took 355 ms).
   * A filtered list known to hold at most `SORTED_MATCHES_LIMIT` rows therefore
   * reads its matches through the filter's own index and sorts them (the
   * `OFFSET 0` keeps the planner from turning that back into the walk):
   * bounded by the count, whatever the statistics say.
   */
  const window = (counted: CountedTotal) => {
    const ids = options.filtered === true && !counted.estimated && counted.total <= SORTED_MATCHES_LIMIT
      ? sql`SELECT id FROM (SELECT id, created_at FROM ${name} WHERE ${matching} OFFSET 0) AS matching
          ORDER BY created_at DESC, id DESC LIMIT ${page.perPage + 1} OFFSET ${offset}`
      : sql`SELECT id FROM ${name} WHERE ${matching}
          ORDER BY created_at DESC, id DESC LIMIT ${page.perPage + 1} OFFSET ${offset}`
    return options.all(sql`SELECT ${select} FROM ${name} WHERE id IN (${ids}) ORDER BY created_at DESC, id DESC`)
  }
  const total = page.total === undefined ? countList(sql, name, where) : Effect.succeed(page.total)
  return Effect.flatMap(total, (counted) =>
    Effect.map(window(counted), (rows) =>
      assemblePage(page, rows, counted, (row) => ({ createdAt: row.created_at, id: row.id }))))
}

/** Up to this many matches a filtered list reads them all and sorts them rather than walk newest first. */
const SORTED_MATCHES_LIMIT = 2_000

/**
 * Lists found longer than `EXACT_TOTAL_LIMIT`, by their query, with the
 * estimate and when it was made: for a minute such a list is not counted
 * again (its total is an estimate either way). Bounded; the oldest go first.
 */
const estimates = new Map<string, { readonly total: number; readonly at: number }>()
const ESTIMATE_TTL_MS = 60_000
const ESTIMATES_KEPT = 1_000

/** Counts a list's rows up to `EXACT_TOTAL_LIMIT`; above it, asks the planner. */
const countList = (
  sql: SqlClient.SqlClient,
  name: Statement.Identifier,
  where: Statement.Fragment
): Effect.Effect<CountedTotal> => {
  const count = sql<{ readonly n: number }>`SELECT count(*)::int AS n
    FROM (SELECT 1 FROM ${name} WHERE ${where} LIMIT ${EXACT_TOTAL_LIMIT + 1}) AS capped`
  const [text, params] = count.compile()
  const key = `${text}\u0000${JSON.stringify(params)}`
  return Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const known = estimates.get(key)
    if (known !== undefined && now - known.at < ESTIMATE_TTL_MS) return Effect.succeed({ total: known.total, estimated: true })
    return orDie(count).pipe(
      Effect.flatMap((rows): Effect.Effect<CountedTotal> => {
        const n = rows[0]?.n ?? 0
        if (n <= EXACT_TOTAL_LIMIT) {
          estimates.delete(key)
          return Effect.succeed({ total: n, estimated: false })
        }
        return orDie(sql<{ readonly "QUERY PLAN": unknown }>`EXPLAIN (FORMAT JSON) SELECT 1 FROM ${name} WHERE ${where}`).pipe(
          Effect.map((plan) => {
            const total = Math.max(EXACT_TOTAL_LIMIT + 1, plannedRows(plan[0]?.["QUERY PLAN"]))
            estimates.delete(key)
            estimates.set(key, { total, at: now })
            if (estimates.size > ESTIMATES_KEPT) estimates.delete(estimates.keys().next().value!)
            return { total, estimated: true }
          })
        )
      })
    )
  })
}

/** The row estimate at the top of an `EXPLAIN (FORMAT JSON)` plan (0 when unreadable). */
const plannedRows = (plan: unknown): number => {
  const parsed = typeof plan === "string" ? JSON.parse(plan) : plan
  const rows = Array.isArray(parsed) ? parsed[0]?.Plan?.["Plan Rows"] : undefined
  return typeof rows === "number" && Number.isFinite(rows) ? Math.round(rows) : 0
}
