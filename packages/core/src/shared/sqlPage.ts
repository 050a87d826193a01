import { Effect } from "effect"
import type { SqlClient, Statement } from "effect/sql"
import { assemblePage, type Page, type PageRequest } from "./pagination.ts"
import { orDie } from "./sql.ts"
import { toIso } from "./time.ts"

/**
 * The one SQL list query: a count and a window of `perPage + 1` rows, newest
 * first by (created_at, id); ids of listed tables are UUIDs. With a cursor the window starts strictly after the
 * cursor's key (keyset, fast at any depth); otherwise at the page's offset.
 * Every list endpoint goes through here.
 */
export const keysetPage = <A>(
  sql: SqlClient.SqlClient,
  options: {
    readonly table: string
    readonly where: Statement.Fragment
    readonly page: PageRequest
    readonly decode: (row: any) => A
    /** Columns to select; defaults to `*`. */
    readonly select?: Statement.Fragment | undefined
  }
): Effect.Effect<Page<A>> => {
  const { page, where } = options
  const table = sql(options.table)
  const select = options.select ?? sql`*`
  const after = page.after
  const window = after === undefined
    ? sql`SELECT ${select} FROM ${table} WHERE ${where}
        ORDER BY created_at DESC, id DESC LIMIT ${page.perPage + 1} OFFSET ${(page.page - 1) * page.perPage}`
    : sql`SELECT ${select} FROM ${table} WHERE ${where}
        AND (created_at, id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)
        ORDER BY created_at DESC, id DESC LIMIT ${page.perPage + 1}`
  const count = sql`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`
  return orDie(Effect.all([count, window], { concurrency: 1 })).pipe(
    Effect.map(([countRows, rows]) => {
      const items = rows.map((r: any) => ({ row: options.decode(r), key: { createdAt: toIso(r.created_at), id: String(r.id) } }))
      const assembled = assemblePage(page, items, Number((countRows[0] as any).n), (i) => i.key)
      return { items: assembled.items.map((i) => i.row), meta: assembled.meta }
    })
  )
}
