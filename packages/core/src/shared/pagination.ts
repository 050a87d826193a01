import { Effect, Schema } from "effect"
import { ValidationFailed } from "./errors.ts"

export const DEFAULT_PER_PAGE = 25
export const MAX_PER_PAGE = 100

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
}

export interface PageMeta {
  readonly page: number
  readonly perPage: number
  readonly total: number
  readonly totalPages: number
  readonly nextCursor: string | null
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
  nextCursor: Schema.NullOr(Schema.String)
})

const CursorPayload = Schema.Struct({
  t: Schema.String,
  i: Schema.String,
  p: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))
})
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const decodeCursorPayload = Schema.decodeUnknownOption(Schema.fromJsonString(CursorPayload))

const toBase64Url = (text: string): string =>
  btoa(String.fromCharCode(...new TextEncoder().encode(text))).replace(/\+/g, "-").replace(/\//g, "_").replace(
    /=+$/,
    ""
  )

const fromBase64Url = (text: string): string | undefined => {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"))
    return new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)))
  } catch {
    return undefined
  }
}

/** The cursor is opaque to clients: base64url of the key and the ordinal of the page it opens. */
export const encodeCursor = (key: CursorKey, page: number): string =>
  toBase64Url(JSON.stringify({ t: key.createdAt, i: key.id, p: page }))

export const decodeCursor = (cursor: string): { readonly key: CursorKey; readonly page: number } | undefined => {
  const json = fromBase64Url(cursor)
  if (json === undefined) return undefined
  const decoded = decodeCursorPayload(json)
  if (decoded._tag === "None") return undefined
  const { i, p, t } = decoded.value
  if (Number.isNaN(Date.parse(t)) || !uuidPattern.test(i)) return undefined
  return { key: { createdAt: t, id: i }, page: p }
}

/** Builds a validated request from the raw list parameters (page, perPage, cursor). */
export const pageRequest = (input: {
  readonly page?: number | undefined
  readonly perPage?: number | undefined
  readonly cursor?: string | undefined
}): Effect.Effect<PageRequest, ValidationFailed> => {
  const details: Array<{ field: string; issue: string }> = []
  const perPage = input.perPage ?? DEFAULT_PER_PAGE
  if (!Number.isInteger(perPage) || perPage < 1 || perPage > MAX_PER_PAGE) {
    details.push({ field: "perPage", issue: `must be an integer between 1 and ${MAX_PER_PAGE}` })
  }
  if (input.page !== undefined && (!Number.isInteger(input.page) || input.page < 1)) {
    details.push({ field: "page", issue: "must be an integer of at least 1" })
  }
  let after: CursorKey | undefined
  let page = input.page ?? 1
  if (input.cursor !== undefined) {
    if (input.page !== undefined) {
      details.push({ field: "cursor", issue: "send either page or cursor, not both" })
    }
    const decoded = decodeCursor(input.cursor)
    if (decoded === undefined) {
      details.push({ field: "cursor", issue: "is not a cursor this API issued" })
    } else {
      after = decoded.key
      page = decoded.page
    }
  }
  return details.length > 0 ? Effect.fail(new ValidationFailed({ details })) : Effect.succeed({ page, perPage, after })
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
  total: number,
  keyOf: (a: A) => CursorKey
): Page<A> => {
  const hasMore = rows.length > request.perPage
  const items = hasMore ? rows.slice(0, request.perPage) : rows
  const last = items[items.length - 1]
  return {
    items,
    meta: {
      page: request.page,
      perPage: request.perPage,
      total,
      totalPages: Math.ceil(total / request.perPage),
      nextCursor: hasMore && last !== undefined ? encodeCursor(keyOf(last), request.page + 1) : null
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
  return assemblePage(request, window, sorted.length, keyOf)
}
