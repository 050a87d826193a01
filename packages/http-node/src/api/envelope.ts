import { Effect, Schema } from "effect"
import { Pagination, Schemas } from "@opsplatform/core"
import { CurrentPrincipal } from "./security.ts"

/** `{ data, error: null }` around a success schema. */
export const Envelope = <S extends Schema.Top>(data: S) =>
  Schema.Struct({ data, error: Schema.Null })

/** `{ data: [...], error: null, meta }` for lists. */
export const ListEnvelope = <S extends Schema.Top>(item: S) =>
  Schema.Struct({ data: Schema.Array(item), error: Schema.Null, meta: Pagination.PageMetaSchema })

/**
 * A resource id in the path. Ids are UUIDs: anything else is a 400
 * `validation_failed` naming the parameter, never a query the database refuses.
 */
export const idParam = (description: string) => Schemas.Uuid.annotate({ description })

const IntFromString = Schema.NumberFromString.check(Schema.isInt())

/** The list parameters every list endpoint accepts. */
export const pageQuery = {
  page: Schema.optionalKey(IntFromString.check(Schema.isBetween({ minimum: 1, maximum: Pagination.MAX_PAGE })).annotate({
    description: `Page number, 1 to ${Pagination.MAX_PAGE} (default 1)`
  })),
  perPage: Schema.optionalKey(
    IntFromString.check(Schema.isBetween({ minimum: 1, maximum: Pagination.MAX_PER_PAGE })).annotate({
      description: `Items per page, 1 to ${Pagination.MAX_PER_PAGE} (default ${Pagination.DEFAULT_PER_PAGE})`
    })
  ),
  cursor: Schema.optionalKey(Schema.String.annotate({
    description: "Opaque keyset cursor from `meta.nextCursor`; send it instead of `page` for fast deep paging"
  }))
}

export const ok = <A>(data: A) => ({ data, error: null }) as const

export const okPage = <A>(page: Pagination.Page<A>) => ({ data: page.items, error: null, meta: page.meta }) as const

/**
 * The tenant of the current request: the caller's organization and
 * environment — the client's, when a cabinet acts for it with
 * `Opsplatform-Organization` (authentication puts it in the principal).
 */
export const currentTenant = Effect.map(CurrentPrincipal, (p) => ({
  organizationId: p.organizationId,
  environment: p.environment
}))

/** The answer to a DELETE: `{ data: { id, deleted: true }, error: null }`. */
export const DeletedEnvelope = Envelope(Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) }))

/** What a DELETE answers once the resource is gone. */
export const deleted = (id: string) => ({ id, deleted: true as const })
