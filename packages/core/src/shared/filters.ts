import { Schema, SchemaAST, SchemaTransformation } from "effect"

/**
 * List filters, declared once (decided: docs/decisions.md, "Filters as
 * schemas"). A list's filter is one `Schema.Struct` in its area's `model.ts`
 * whose fields are all optional: the API's query takes its fields as they
 * are, the service and the repository take its type, and both stores read it
 * through one helper each (`filterConditions` in `tables.ts` for SQL,
 * `filterPredicates` in the testing package for memory). A field without an
 * annotation is equality on the column of its name; the others say how they
 * match with one of the constructors below. An absent field adds no condition,
 * so a list is filtered exactly when it has conditions.
 */

/** How a present value of a filter field meets a row. */
export type MatchKind =
  /** `column = value` */
  | "equals"
  /** `column >= value` (dates and instants) */
  | "from"
  /** `column <= value` (dates) */
  | "to"
  /** `column < value` (instants: the end of a half-open range) */
  | "before"
  /** the column's text holds the value, in any letter case */
  | "contains"
  /** `true`: the column is set; `false`: it is null */
  | "present"
  /** the store's own condition for this list (one that needs more than the value: "today", the tenant) */
  | "own"

export interface Match {
  readonly kind: MatchKind
  /** The column it reads (the record's field of that name in memory); the field's own name when absent. */
  readonly column?: string | undefined
}

/** One present field of a filter value: how it matches, and the value. */
export interface FieldCondition {
  readonly field: string
  readonly column: string
  readonly kind: MatchKind
  readonly value: unknown
}

const MatchKey = "opsplatform/filter"

const matching = (match: Match) => <S extends Schema.Top>(schema: S): S["Rebuild"] =>
  schema.annotate({ [MatchKey]: match })

/** The constructors of a filter field's match, for `.pipe(...)` on the field's schema. */
export const Filters = {
  /** Equality on another column than the field's name. */
  equals: (column: string) => matching({ kind: "equals", column }),
  /** On or after: `column >= value`. */
  from: (column: string) => matching({ kind: "from", column }),
  /** On or before: `column <= value`. */
  to: (column: string) => matching({ kind: "to", column }),
  /** Strictly before: `column < value`. */
  before: (column: string) => matching({ kind: "before", column }),
  /** Part of the column's text, any case. */
  contains: (column: string) => matching({ kind: "contains", column }),
  /** Whether the column is set (`true`) or null (`false`). */
  present: (column: string) => matching({ kind: "present", column }),
  /** A condition each store gives for this list. */
  own: matching({ kind: "own" })
} as const

/** A filter: a struct of optional fields, each one query parameter. */
export type FilterSchema = Schema.Struct<Schema.Struct.Fields>

/**
 * The conditions a filter value asks for, one per present field, in the
 * order of the schema's fields (the same order in every store, so the SQL
 * text of a list is the same for the same fields).
 */
export const fieldConditions = <S extends FilterSchema>(schema: S, value: S["Type"]): ReadonlyArray<FieldCondition> => {
  const out: Array<FieldCondition> = []
  for (const [field, fieldSchema] of Object.entries(schema.fields)) {
    const present = (value as Readonly<Record<string, unknown>>)[field]
    if (present === undefined) continue
    const match = SchemaAST.resolve(fieldSchema.ast)?.[MatchKey] as Match | undefined
    out.push({ field, column: match?.column ?? field, kind: match?.kind ?? "equals", value: present })
  }
  return out
}

/**
 * The conditions a store writes itself, one per `own` field: from the field's
 * value to the store's condition, or none where the value asks nothing (a
 * range's end beyond the last instant).
 */
export type OwnConditions<F, C> = { readonly [K in keyof F]?: (value: Exclude<F[K], undefined>) => C | undefined }

/** The store's condition for an `own` field; a filter whose store forgot one is a defect, found by the conformance suites. */
export const ownCondition = <C>(
  own: Readonly<Record<string, ((value: never) => C | undefined) | undefined>> | undefined,
  c: FieldCondition
): C | undefined => {
  const f = own?.[c.field]
  if (f === undefined) throw new Error(`The filter field "${c.field}" matches in the store's own way, and this store gives none`)
  return f(c.value as never)
}

/** `true` / `false` in a query string, a boolean once decoded. */
export const QueryBoolean = Schema.Literals(["true", "false"]).pipe(
  Schema.decodeTo(
    Schema.Boolean,
    SchemaTransformation.transform({ decode: (s) => s === "true", encode: (b) => (b ? "true" : "false") })
  )
)
