import { Effect, Schema } from "effect"
import { ValidationFailed } from "./errors.ts"
import { isInstantInRange, MAX_PAGE, MAX_PER_PAGE } from "./limits.ts"
import { isUuid } from "./schemas.ts"
import { decodeBase64UrlText, encodeBase64Url } from "./secrets.ts"

export const DEFAULT_PER_PAGE = 25
export { MAX_PAGE, MAX_PER_PAGE }

/** Where a keyset page starts: strictly after this (created_at, id) pair, newest first. */
export interface CursorKey {
  readonly createdAt: string
  readonly id: string
}

/**
 * A list request, already validated. `after` is set when the caller sent a
 * cursor: the page then starts after that key instead of at an offset, which
 * stays fast however deep the page is.
 */
export interface PageRequest {
  readonly page: number
  readonly perPage: number
  readonly after: CursorKey | undefined
  /**
   * The list's total as the walk's first page counted it, carried by the
   * cursor so that later pages count nothing (decided: docs/decisions.md,
   * "What meta.total costs").
   */
  readonly total?: CountedTotal | undefined
  /** Which list the page belongs to (its filters); a cursor carries it and is refused by any other list. */
  readonly scope?: string | undefined
}

export interface PageMeta {
  readonly page: number
  readonly perPage: number
  readonly total: number
  readonly totalPages: number
  readonly nextCursor: string | null
  /** Present, and true, when `total` is the database's estimate rather than a count (lists above `EXACT_TOTAL_LIMIT`). */
  readonly totalEstimated?: true
}

/**
 * Up to this many rows a list's `meta.total` is counted exactly; beyond it the
 * count would cost more than the page (a scan of every matching row), so the
 * total is the query planner's estimate and `meta.totalEstimated` says so.
 */
export const EXACT_TOTAL_LIMIT = 10_000

/** A list's total: counted, or estimated above `EXACT_TOTAL_LIMIT`. */
export interface CountedTotal {
  readonly total: number
  readonly estimated: boolean
}

export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly meta: PageMeta
}

export const PageMetaSchema = Schema.Struct({
  page: Schema.Int,
  perPage: Schema.Int,
  total: Schema.Int,
  totalPages: Schema.Int,
  nextCursor: Schema.NullOr(Schema.String),
  totalEstimated: Schema.optionalKey(Schema.Literal(true)).annotate({
    description: "Present when the list holds more than 10 000 rows: `total` (and `totalPages`) is then the database's estimate"
  })
})

const CursorPayload = Schema.Struct({
  t: Schema.String,
  i: Schema.String,
  p: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)),
  s: Schema.optionalKey(Schema.String),
  n: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  e: Schema.optionalKey(Schema.Literal(1))
})

/**
 * A short fingerprint of a list's filters (FNV-1a over their canonical JSON),
 * so a cursor of one list is refused by a list with other filters instead of
 * paging it from a point that means nothing there.
 */
export const listScope = (filter: Readonly<Record<string, unknown>>): string => {
  const canonical = JSON.stringify(
    Object.keys(filter).filter((k) => filter[k] !== undefined).sort().map((k) => [k, filter[k]])
  )
  let hash = 0x811c9dc5
  for (let i = 0; i < canonical.length; i++) {
    hash ^= canonical.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash.toString(16).padStart(8, "0")
}

const decodeCursorPayload = Schema.decodeUnknownOption(Schema.fromJsonString(CursorPayload))

/** The cursor is opaque to clients: base64url of the key and the ordinal of the page it opens. */
export const encodeCursor = (key: CursorKey, page: number, scope?: string, total?: CountedTotal): string =>
  encodeBase64Url(new TextEncoder().encode(JSON.stringify({
    t: key.createdAt,
    i: key.id,
    p: page,
    ...(scope === undefined ? {} : { s: scope }),
    ...(total === undefined ? {} : { n: total.total, ...(total.estimated ? { e: 1 } : {}) })
  })))

export const decodeCursor = (
  cursor: string
): {
  readonly key: CursorKey
  readonly page: number
  readonly scope: string | undefined
  readonly total: CountedTotal | undefined
} | undefined => {
  const json = decodeBase64UrlText(cursor)
  if (json === undefined) return undefined
  const decoded = decodeCursorPayload(json)
  if (decoded._tag === "None") return undefined
  const { e, i, n, p, s, t } = decoded.value
  // A cursor names an instant as this API writes them (UTC, within the instant range): anything else was not issued here.
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(t) || !isInstantInRange(Date.parse(t)) || !isUuid(i)) return undefined
  return { key: { createdAt: t, id: i }, page: p, scope: s, total: n === undefined ? undefined : { total: n, estimated: e === 1 } }
}

/**
 * Builds a validated request from the raw list parameters (page, perPage,
 * cursor). `scope` names the list (see `listScope`): a cursor issued for
 * another one is refused.
 */
export const pageRequest = (input: {
  readonly page?: number | undefined
  readonly perPage?: number | undefined
  readonly cursor?: string | undefined
}, scope?: string): Effect.Effect<PageRequest, ValidationFailed> => {
  const details: Array<{ field: string; issue: string }> = []
  const perPage = input.perPage ?? DEFAULT_PER_PAGE
  if (!Number.isInteger(perPage) || perPage < 1 || perPage > MAX_PER_PAGE) {
    details.push({ field: "perPage", issue: `must be an integer between 1 and ${MAX_PER_PAGE}` })
  }
  if (input.page !== undefined && (!Number.isInteger(input.page) || input.page < 1 || input.page > MAX_PAGE)) {
    details.push({ field: "page", issue: `must be an integer between 1 and ${MAX_PAGE}` })
  }
  let after: CursorKey | undefined
  let total: CountedTotal | undefined
  let page = input.page ?? 1
  if (input.cursor !== undefined) {
    if (input.page !== undefined) {
      details.push({ field: "cursor", issue: "send either page or cursor, not both" })
    }
    const decoded = decodeCursor(input.cursor)
    if (decoded === undefined) {
      details.push({ field: "cursor", issue: "is not a cursor this API issued" })
    } else if (decoded.scope !== scope) {
      details.push({ field: "cursor", issue: "belongs to a list with other filters; start again without it" })
    } else {
      after = decoded.key
      page = decoded.page
      total = decoded.total
    }
  }
  return details.length > 0
    ? Effect.fail(new ValidationFailed({ details }))
    : Effect.succeed({ page, perPage, after, ...(total === undefined ? {} : { total }), ...(scope === undefined ? {} : { scope }) })
}

/** Newest first: created_at descending, then id descending. */
export const compareNewestFirst = (a: CursorKey, b: CursorKey): number => {
  const ta = Date.parse(a.createdAt)
  const tb = Date.parse(b.createdAt)
  if (ta !== tb) return tb - ta
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0
}

/**
 * Assembles a page from the rows of one window query. Stores fetch
 * `perPage + 1` rows (offset for page mode, keyset for cursor mode) so the
 * presence of a next page is known without another query.
 */
export const assemblePage = <A>(
  request: PageRequest,
  rows: ReadonlyArray<A>,
  counted: number | CountedTotal,
  keyOf: (a: A) => CursorKey
): Page<A> => {
  const hasMore = rows.length > request.perPage
  const items = hasMore ? rows.slice(0, request.perPage) : rows
  const last = items[items.length - 1]
  const { estimated, total } = typeof counted === "number" ? { total: counted, estimated: false } : counted
  return {
    items,
    meta: {
      page: request.page,
      perPage: request.perPage,
      total,
      totalPages: Math.ceil(total / request.perPage),
      nextCursor: hasMore && last !== undefined
        ? encodeCursor(keyOf(last), request.page + 1, request.scope, { total, estimated })
        : null,
      ...(estimated ? { totalEstimated: true as const } : {})
    }
  }
}

/** The in-memory twin of the SQL window: sort newest first, then cut the window. */
export const pageFromArray = <A>(
  request: PageRequest,
  all: ReadonlyArray<A>,
  keyOf: (a: A) => CursorKey
): Page<A> => {
  const sorted = [...all].sort((a, b) => compareNewestFirst(keyOf(a), keyOf(b)))
  const after = request.after
  const start = after === undefined
    ? (request.page - 1) * request.perPage
    : sorted.findIndex((a) => compareNewestFirst(after, keyOf(a)) < 0)
  const window = start < 0 ? [] : sorted.slice(start, start + request.perPage + 1)
  return assemblePage(request, window, request.total ?? sorted.length, keyOf)
}
