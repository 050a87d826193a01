import { Effect } from "effect"
import { Pagination, type Tenant } from "@opsplatform/core"
import { currentTenant, ok, okPage } from "../api/envelope.ts"
import { domain } from "../api/errors.ts"

/** Runs a core call for the caller's tenant and answers its result in the envelope. */
export const withTenant = <A, E, R>(f: (tenant: Tenant.Tenant) => Effect.Effect<A, E, R>) =>
  domain(Effect.flatMap(currentTenant, f).pipe(Effect.map(ok)))

interface PageQuery {
  readonly page?: number | undefined
  readonly perPage?: number | undefined
  readonly cursor?: string | undefined
}

/**
 * A list endpoint: the standard page parameters become the page request, the
 * rest of the query is the filter, and the page is answered with its `meta`.
 */
export const listForTenant = <Q extends PageQuery, A, E, R>(
  query: Q,
  f: (
    tenant: Tenant.Tenant,
    filter: Omit<Q, keyof PageQuery>,
    page: Pagination.PageRequest
  ) => Effect.Effect<Pagination.Page<A>, E, R>,
  /** What else names the list besides its filters (the parent of a nested list, e.g. a subscription's id). */
  parent: Readonly<Record<string, string>> = {}
) =>
  domain(Effect.gen(function*() {
    const tenant = yield* currentTenant
    const { cursor, page, perPage, ...filter } = query
    const request = yield* Pagination.pageRequest({ cursor, page, perPage }, Pagination.listScope({ ...filter, ...parent }))
    return okPage(yield* f(tenant, filter, request))
  }))
