import fc from "fast-check"
import { Limits } from "@opsplatform/core"

/**
 * Fast-check arbitraries derived from the served OpenAPI document: for every
 * operation, values its parameter and body schemas accept, mixed with hostile
 * ones aimed at the edges the API promises to refuse cleanly (wrong types,
 * bounds ± 1, huge and deep values, lone surrogates, NUL, extreme dates and
 * numbers, tampered cursors, bad ids). The bounds come from the document
 * (maxLength, maximum, maxItems…) and from `Limits` in core, the constants the
 * code checks with, so the suite follows both without edits.
 */

export type JsonSchema = {
  readonly $ref?: string
  readonly type?: string | ReadonlyArray<string>
  readonly enum?: ReadonlyArray<unknown>
  readonly const?: unknown
  readonly anyOf?: ReadonlyArray<JsonSchema>
  readonly oneOf?: ReadonlyArray<JsonSchema>
  readonly allOf?: ReadonlyArray<JsonSchema>
  readonly properties?: Record<string, JsonSchema>
  readonly required?: ReadonlyArray<string>
  readonly additionalProperties?: boolean | JsonSchema
  readonly items?: JsonSchema
  readonly minItems?: number
  readonly maxItems?: number
  readonly minLength?: number
  readonly maxLength?: number
  readonly minimum?: number
  readonly maximum?: number
  readonly exclusiveMinimum?: number
  readonly exclusiveMaximum?: number
  readonly pattern?: string
  readonly format?: string
}

export interface OpenApiDocument {
  readonly paths: Record<string, Record<string, any>>
  readonly components?: { readonly schemas?: Record<string, JsonSchema> }
}

export interface Parameter {
  readonly name: string
  readonly in: "path" | "query" | "header"
  readonly required: boolean
  readonly schema: JsonSchema
}

export interface Operation {
  readonly id: string
  /** The handler group, the part of the operationId before the dot (as in test/support/matrix.ts). */
  readonly group: string
  readonly method: string
  /** The path template, e.g. `/v1/delivery-routes/{id}/stops`. */
  readonly path: string
  readonly parameters: ReadonlyArray<Parameter>
  readonly body: JsonSchema | undefined
  /** The documented statuses; `json` false where the document promises an empty body. */
  readonly responses: Record<string, { readonly json: boolean }>
}

const methods = ["get", "post", "put", "patch", "delete"]

/** Every operation of the document, in document order. */
export const operationsOf = (doc: OpenApiDocument): ReadonlyArray<Operation> =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).filter(([method]) => methods.includes(method)).map(([method, op]): Operation => ({
      id: op.operationId,
      group: String(op.operationId).split(".")[0]!,
      method: method.toUpperCase(),
      path,
      parameters: (op.parameters ?? []).map((p: any) => ({ name: p.name, in: p.in, required: p.required === true, schema: p.schema ?? {} })),
      body: op.requestBody?.content?.["application/json"]?.schema,
      responses: Object.fromEntries(
        Object.entries(op.responses ?? {}).map(([status, r]: [string, any]) => [status, { json: r?.content?.["application/json"] !== undefined }])
      )
    }))
  )

/** Follows `$ref`s into `components.schemas`. */
export const resolve = (doc: OpenApiDocument, schema: JsonSchema): JsonSchema => {
  let s = schema
  for (let i = 0; s.$ref !== undefined && i < 32; i++) {
    s = doc.components?.schemas?.[s.$ref.replace("#/components/schemas/", "")] ?? {}
  }
  return s
}

// --- hostile values -------------------------------------------------------------------------

const base64Url = (text: string) => Buffer.from(text).toString("base64url")

/** Nested arrays `depth` deep: `[[[…]]]`. */
export const deep = (depth: number): unknown => {
  let v: unknown = []
  for (let i = 0; i < depth; i++) v = [v]
  return v
}

/** Nested objects `depth` deep: `{"a":{"a":…}}`. */
const deepObject = (depth: number): unknown => {
  let v: unknown = {}
  for (let i = 0; i < depth; i++) v = { a: v }
  return v
}

/** Dates and instants at and beyond the edges of the API's range (Limits), and malformed ones. */
export const extremeDates: ReadonlyArray<string> = [
  Limits.DATE_MIN,
  Limits.DATE_MAX,
  "0000-12-31",
  "0000-01-01",
  "10000-01-01",
  "+010000-01-01",
  "-000001-01-01",
  "2026-02-29",
  "2026-13-01",
  "2026-00-10",
  "2026-1-1",
  Limits.INSTANT_MIN,
  Limits.INSTANT_MAX,
  "0001-01-01T00:00:00Z",
  "0001-01-01T00:00:00+14:00",
  "9999-12-31T23:59:59.999Z",
  "9999-12-31T23:00:00-05:00",
  "9999-12-31T10:00:00-14:00",
  "0000-01-01T00:00:00Z",
  "+275760-09-13T00:00:00.000Z",
  "-271821-04-20T00:00:00.000Z",
  "10000-01-01T00:00:00Z",
  "1970-01-01T00:00:00Z",
  "2026-03-02T24:00:00Z",
  "2026-03-02T07:00:00+25:00",
  "2026-03-02T07:00:00",
  "2026-03-02 07:00:00Z"
]

/** Numbers a careless server mishandles: unsafe integers, the largest and smallest doubles, -0. */
export const extremeNumbers: ReadonlyArray<number> = [
  0,
  -0,
  -1,
  1.5,
  0.1 + 0.2,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 53 + 2,
  -(2 ** 53) - 2,
  1e21,
  1e308,
  -1e308,
  5e-324,
  Number.MAX_SAFE_INTEGER
]

/** Strings that once reached a 500 somewhere, or might: lone surrogates, NUL, control and format characters, injection shapes. */
export const hostileStrings: ReadonlyArray<string> = [
  "",
  " ",
  "a\ud800b",
  "\udc00",
  "\ud83d",
  "a\u0000b",
  "\u0000",
  "\u0007\u001b[31m",
  "\ufeff",
  "\u202eevil",
  "🚚".repeat(300),
  "x".repeat(10_000),
  "'; DROP TABLE locations; --",
  "%00",
  "../../etc/passwd",
  "{\"$ne\":null}",
  "NaN",
  "Infinity",
  "-Infinity",
  "null",
  "true",
  "1e999",
  "00000000-0000-0000-0000-000000000000",
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
  "not-a-uuid",
  "e\u0301",
  "\u{10FFFF}",
  "ß".repeat(2000)
]

/** Cursors this API never issued: wrong encodings, instants outside the range, wrong field types. */
export const tamperedCursors: ReadonlyArray<string> = [
  "x",
  "====",
  "%%%",
  base64Url("not json"),
  base64Url("{}"),
  base64Url(JSON.stringify({ t: "+275760-09-13T00:00:00.000Z", i: "00000000-0000-4000-8000-000000000001", p: 2 })),
  base64Url(JSON.stringify({ t: "10000-01-01T00:00:00.000Z", i: "00000000-0000-4000-8000-000000000001", p: 2 })),
  base64Url(JSON.stringify({ t: "0000-01-01T00:00:00.000Z", i: "00000000-0000-4000-8000-000000000001", p: 2 })),
  base64Url(JSON.stringify({ t: "2026-01-01T00:00:00.000Z", i: "x", p: 2 })),
  base64Url(JSON.stringify({ t: "2026-01-01T00:00:00.000Z", i: "00000000-0000-4000-8000-000000000001", p: -1 })),
  base64Url(JSON.stringify({ t: "2026-01-01T00:00:00.000Z", i: "00000000-0000-4000-8000-000000000001", p: 1e308 })),
  base64Url(JSON.stringify({ t: 1, i: [], p: "2", s: {} })),
  base64Url("\ud800")
]

/** Path ids that are not ids of this organization: malformed, nil, max, unknown, overlong. */
export const badIds: ReadonlyArray<string> = [
  "not-a-uuid",
  "00000000-0000-0000-0000-000000000000",
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
  "00000000-0000-4000-8000-00000000beef",
  "0".repeat(5000),
  "%00",
  "%ED%A0%80",
  "..",
  "1",
  "-1",
  "1e308"
]

/** Any hostile JSON value: wrong types, extreme numbers and strings, huge and deep structures. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, [], {}, [null], { "": null }, { __proto__: 1 }, { constructor: { prototype: 1 } }),
  fc.constantFrom(...extremeNumbers),
  fc.constantFrom(...hostileStrings),
  fc.constantFrom(...extremeDates),
  fc.constantFrom<unknown>(deep(64), deep(1000), deepObject(64), deepObject(1000)),
  fc.constantFrom<unknown>(Array.from({ length: 10_000 }, (_, i) => i), Array.from({ length: 1000 }, () => ({ a: "x" }))),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.jsonValue({ maxDepth: 3 })
)

// --- values from schemas --------------------------------------------------------------------

/** Seeded ids a body field may name, by field name (so writes can succeed, not only fail on a foreign key). */
export type IdPool = Readonly<Record<string, ReadonlyArray<string>>>

const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10)

const dates = fc.oneof(
  fc.integer({ min: Date.parse("2020-01-01"), max: Date.parse("2035-12-31") }).map(isoDate),
  fc.constantFrom(Limits.DATE_MIN, Limits.DATE_MAX)
)
const instants = fc.oneof(
  fc.integer({ min: Date.parse("2020-01-01"), max: Date.parse("2035-12-31") }).map((ms) => new Date(ms).toISOString()),
  fc.integer({ min: Limits.INSTANT_MIN_MS, max: Limits.INSTANT_MAX_MS }).map((ms) => new Date(ms).toISOString()),
  fc.constantFrom(Limits.INSTANT_MIN, Limits.INSTANT_MAX, "2026-03-02T07:00:00+02:00")
)

const stringOf = (schema: JsonSchema, name: string, pool: IdPool): fc.Arbitrary<unknown> => {
  if (schema.format === "uuid") {
    const known = pool[name] ?? []
    return known.length > 0 ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: fc.uuid() }) : fc.uuid()
  }
  if (schema.format === "date") return dates
  if (schema.format === "date-time") return instants
  if (schema.pattern !== undefined) {
    try {
      return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => schema.maxLength === undefined || s.length <= schema.maxLength)
    } catch {
      // a pattern JavaScript cannot compile: plain strings below
    }
  }
  const max = Math.min(schema.maxLength ?? 40, 40)
  const min = Math.min(schema.minLength ?? 1, max)
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ minLength: min, maxLength: max }) },
    { weight: 1, arbitrary: fc.string({ unit: "grapheme", minLength: min, maxLength: max }) },
    // At the limit and one past it, in characters that take two UTF-16 units.
    { weight: 1, arbitrary: fc.constantFrom(...(schema.maxLength === undefined ? ["x"] : ["🚚".repeat(schema.maxLength), "🚚".repeat(schema.maxLength + 1)])) }
  )
}

const numberOf = (schema: JsonSchema, integer: boolean): fc.Arbitrary<unknown> => {
  const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + (integer ? 1 : 1e-9) : -200)
  const max = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - (integer ? 1 : 1e-9) : 200)
  const edges = [min, max, min - 1, max + 1].filter(Number.isFinite)
  const inside = integer
    ? fc.integer({ min: Math.ceil(Math.max(min, -(2 ** 31))), max: Math.floor(Math.min(max, 2 ** 31)) })
    : fc.double({ min, max, noNaN: true, noDefaultInfinity: true })
  return fc.oneof({ weight: 4, arbitrary: inside }, { weight: 1, arbitrary: fc.constantFrom(...edges) })
}

/**
 * Values for `schema`: valid-looking ones mostly, each part replaced by a
 * hostile value with probability `1 / (hostility + 1)` (never when 0).
 */
export const arbitraryFor = (
  doc: OpenApiDocument,
  schema: JsonSchema,
  options: { readonly pool: IdPool; readonly name?: string; readonly depth?: number; readonly hostility?: number }
): fc.Arbitrary<unknown> => {
  const depth = options.depth ?? 0
  const name = options.name ?? ""
  const hostility = options.hostility ?? 6
  const s = resolve(doc, schema)
  const mixed = (valid: fc.Arbitrary<unknown>) =>
    hostility === 0 ? valid : fc.oneof({ weight: hostility, arbitrary: valid }, { weight: 1, arbitrary: hostileValue })
  const next = (sub: JsonSchema, subName: string) => arbitraryFor(doc, sub, { ...options, name: subName, depth: depth + 1 })
  if (depth > 8) return hostileValue
  if (s.const !== undefined) return mixed(fc.constant(s.const))
  if (s.enum !== undefined) return mixed(fc.constantFrom(...s.enum))
  const alternatives = s.anyOf ?? s.oneOf
  if (alternatives !== undefined) return fc.oneof(...alternatives.map((a) => next(a, name)))
  if (s.allOf !== undefined && s.allOf.length > 0) return next(s.allOf[0]!, name)
  const type = Array.isArray(s.type) ? s.type[0] : s.type
  switch (type) {
    case "string":
      return mixed(stringOf(s, name, options.pool))
    case "integer":
      return mixed(numberOf(s, true))
    case "number":
      return mixed(numberOf(s, false))
    case "boolean":
      return mixed(fc.boolean())
    case "null":
      return mixed(fc.constant(null))
    case "array": {
      const item = s.items === undefined ? hostileValue : next(s.items, name.endsWith("s") ? name.slice(0, -1) : name)
      const minLength = s.minItems ?? 0
      const maxLength = Math.max(minLength, Math.min(s.maxItems ?? 3, 3))
      const edge = s.maxItems === undefined ? [] : [{ weight: 1, arbitrary: fc.array(item, { minLength: s.maxItems + 1, maxLength: s.maxItems + 1 }) }]
      return mixed(fc.oneof({ weight: 5, arbitrary: fc.array(item, { minLength, maxLength }) }, ...edge))
    }
    case "object":
    default: {
      if (s.properties === undefined) return mixed(fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }))
      const model = Object.fromEntries(Object.entries(s.properties).map(([key, sub]) => [key, next(sub, key)]))
      const record = fc.record(model, { requiredKeys: [...(s.required ?? [])].filter((k) => k in model) })
      // Now and then an unknown key, or a required one left out.
      const unknownKey = record.map((r) => ({ ...(r as object), unknown_field_fuzz: 1 }))
      const missing = record.map((r) => {
        const copy: Record<string, unknown> = { ...(r as object) }
        delete copy[(s.required ?? [])[0] ?? ""]
        return copy
      })
      return hostility === 0
        ? record
        : mixed(fc.oneof({ weight: 8, arbitrary: record }, { weight: 1, arbitrary: unknownKey }, { weight: 1, arbitrary: missing }))
    }
  }
}

/**
 * Values at and past the edges of `schema`, aimed where it is likely to
 * break: dates and instants at and beyond the range, bounds ± 1, extreme
 * numbers, strings one character too long, bad ids, one item too many. In an
 * object, one property (at any depth) gets an edge value and the others valid
 * ones, so the answer speaks of that property.
 */
export const edgeFor = (
  doc: OpenApiDocument,
  schema: JsonSchema,
  options: {
    readonly pool: IdPool
    readonly name?: string
    readonly depth?: number
    /** Valid values of the whole schema to start from (e.g. known-good examples); its own values otherwise. */
    readonly base?: fc.Arbitrary<unknown>
  }
): fc.Arbitrary<unknown> => {
  const s = resolve(doc, schema)
  const depth = options.depth ?? 0
  const name = options.name ?? ""
  if (depth > 8) return hostileValue
  const alternatives = s.anyOf ?? s.oneOf
  if (alternatives !== undefined) return fc.oneof(...alternatives.map((a) => edgeFor(doc, a, options)))
  if (s.enum !== undefined || s.const !== undefined) return fc.oneof(fc.constantFrom<unknown>("", "X", "null", 0, null), hostileValue)
  const type = Array.isArray(s.type) ? s.type[0] : s.type
  switch (type) {
    case "string": {
      if (s.format === "date" || s.format === "date-time") return fc.constantFrom(...extremeDates)
      if (s.format === "uuid") return fc.constantFrom(...badIds)
      const long = s.maxLength === undefined ? [] : ["x".repeat(s.maxLength + 1), "🚚".repeat(s.maxLength), "🚚".repeat(s.maxLength + 1)]
      return fc.constantFrom(...long, ...hostileStrings, ...extremeDates)
    }
    case "integer":
    case "number": {
      const bounds = [s.minimum, s.maximum, s.exclusiveMinimum, s.exclusiveMaximum].filter((n): n is number => n !== undefined)
      return fc.constantFrom<unknown>(...bounds.flatMap((b) => [b - 1, b, b + 1, b + 0.5]), ...extremeNumbers, "1", null)
    }
    case "boolean":
    case "null":
      return fc.constantFrom<unknown>("true", 1, 0, "", [], {}, null)
    case "array": {
      const item = s.items === undefined ? fc.constant(null) : arbitraryFor(doc, s.items, { pool: options.pool, name, depth: depth + 1, hostility: 0 })
      const edgeItem = s.items === undefined ? hostileValue : edgeFor(doc, s.items, { ...options, depth: depth + 1 })
      const tooMany = s.maxItems === undefined ? [] : [fc.array(item, { minLength: s.maxItems + 1, maxLength: s.maxItems + 1 })]
      return fc.oneof(fc.tuple(fc.array(item, { maxLength: 2 }), edgeItem).map(([a, e]) => [...a, e]), fc.constant([]), ...tooMany)
    }
    default: {
      const properties = Object.entries(s.properties ?? {})
      if (properties.length === 0) return hostileValue
      const valid = options.base ?? arbitraryFor(doc, s, { pool: options.pool, name, depth, hostility: 0 })
      return fc.tuple(valid, fc.constantFrom(...properties)).chain(([base, [key, sub]]) =>
        edgeFor(doc, sub, { pool: options.pool, name: key, depth: depth + 1 }).map((edge) => ({ ...(base as object), [key]: edge }))
      )
    }
  }
}

/** The paths (through objects, not arrays) of every date and date-time property of `schema`. */
export const datePaths = (doc: OpenApiDocument, schema: JsonSchema, at: ReadonlyArray<string> = [], depth = 0): Array<ReadonlyArray<string>> => {
  const s = resolve(doc, schema)
  if (depth > 6) return []
  const alternatives = s.anyOf ?? s.oneOf
  if (alternatives !== undefined) return alternatives.flatMap((a) => datePaths(doc, a, at, depth + 1)).filter((p, i, all) => all.findIndex((q) => q.join(".") === p.join(".")) === i)
  if (s.format === "date" || s.format === "date-time") return [at]
  return Object.entries(s.properties ?? {}).flatMap(([key, sub]) => datePaths(doc, sub, [...at, key], depth + 1))
}

/** `value` (an object) with `date` written at every path of `paths` whose parent exists. */
export const withDates = (value: unknown, paths: ReadonlyArray<ReadonlyArray<string>>, date: string): unknown => {
  const copy = structuredClone(value) as any
  for (const path of paths) {
    let parent = copy
    for (const key of path.slice(0, -1)) parent = parent !== null && typeof parent === "object" ? parent[key] : undefined
    if (parent !== null && typeof parent === "object" && !Array.isArray(parent)) parent[path[path.length - 1]!] = date
  }
  return copy
}

/** A query parameter's value as it travels: a string; `hostile` aims at the edges and beyond. */
export const queryValueFor = (doc: OpenApiDocument, p: Parameter, pool: IdPool, hostile: boolean): fc.Arbitrary<string> => {
  const asText = (v: unknown) => typeof v === "string" ? v : typeof v === "object" ? JSON.stringify(v) : String(v)
  if (!hostile) return arbitraryFor(doc, p.schema, { pool, name: p.name, hostility: 0 }).map(asText)
  const special = p.name === "cursor"
    ? fc.constantFrom(...tamperedCursors)
    : p.name === "page" || p.name === "perPage"
    ? fc.constantFrom("0", "-1", "1.5", "1e3", String(Limits.MAX_PER_PAGE), String(Limits.MAX_PER_PAGE + 1), String(Limits.MAX_PAGE), String(Limits.MAX_PAGE + 1), "99999999999999999999", "0x10", " 1", "")
    : fc.constantFrom(...extremeDates, ...hostileStrings.filter((s) => s.length < 1000))
  return fc.oneof(
    { weight: 2, arbitrary: special },
    { weight: 3, arbitrary: edgeFor(doc, p.schema, { pool, name: p.name }).map(asText) },
    { weight: 1, arbitrary: hostileValue.map(asText) }
  )
}

/** Every node of a JSON value as a path of keys, the root first. */
const nodePaths = (value: unknown, at: ReadonlyArray<string | number> = []): Array<ReadonlyArray<string | number>> => {
  const here = [at]
  if (Array.isArray(value)) return here.concat(...value.map((v, i) => nodePaths(v, [...at, i])))
  if (value !== null && typeof value === "object") return here.concat(...Object.entries(value).map(([k, v]) => nodePaths(v, [...at, k])))
  return here
}

/** `value` with its `index`-th node (modulo their number, the root first) replaced by `replacement`. */
export const replaceNode = (value: unknown, index: number, replacement: unknown): unknown => {
  const paths = nodePaths(value)
  const target = paths[index % paths.length]!
  if (target.length === 0) return replacement
  const copy = structuredClone(value) as any
  let parent = copy
  for (const key of target.slice(0, -1)) parent = parent[key]
  parent[target[target.length - 1]!] = replacement
  return copy
}

// --- long adversarial values for the timing check ---------------------------------------------

/** A string field of an operation that the document gives a `pattern` or a `format`: where it goes and its schema. */
export interface PatternTarget {
  readonly op: Operation
  readonly in: "path" | "query" | "body"
  /** The parameter's name, or the field's path in the body (array items at index 0). */
  readonly path: ReadonlyArray<string | number>
  readonly schema: JsonSchema
}

/** What tells one field's validation from another's: its format, pattern and length. */
export const signatureOf = (schema: JsonSchema) => `${schema.format ?? ""}|${schema.pattern ?? ""}|${schema.maxLength ?? ""}`

/** The string schemas with a pattern or a format at or under `schema`, with their paths. */
const patternFields = (doc: OpenApiDocument, schema: JsonSchema, at: ReadonlyArray<string | number> = [], depth = 0): Array<{
  readonly path: ReadonlyArray<string | number>
  readonly schema: JsonSchema
}> => {
  const s = resolve(doc, schema)
  if (depth > 10) return []
  const own = (Array.isArray(s.type) ? s.type.includes("string") : s.type === "string") && (s.pattern !== undefined || s.format !== undefined)
    ? [{ path: at, schema: s }]
    : []
  const alternatives = [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])].flatMap((a) => patternFields(doc, a, at, depth + 1))
  const properties = Object.entries(s.properties ?? {}).flatMap(([key, sub]) => patternFields(doc, sub, [...at, key], depth + 1))
  const items = s.items === undefined ? [] : patternFields(doc, s.items, [...at, 0], depth + 1)
  const all = [...own, ...alternatives, ...properties, ...items]
  return all.filter((f, i) => all.findIndex((g) => g.path.join(".") === f.path.join(".") && signatureOf(g.schema) === signatureOf(f.schema)) === i)
}

/** Every string field with a pattern or a format in the document: path and query parameters and body fields of every operation. */
export const patternTargets = (doc: OpenApiDocument, operations: ReadonlyArray<Operation>): Array<PatternTarget> =>
  operations.flatMap((op) => [
    ...op.parameters.filter((p) => p.in === "path" || p.in === "query").flatMap((p) =>
      patternFields(doc, p.schema).map((f) => ({ op, in: p.in as "path" | "query", path: [p.name], schema: f.schema }))
    ),
    ...(op.body === undefined || op.method === "GET" ? [] : patternFields(doc, op.body).map((f) => ({ op, in: "body" as const, path: f.path, schema: f.schema })))
  ])

/** Short valid values of the field, each of another shape (other separators): what its pattern generates, or its format's example. */
const samplesOf = (schema: JsonSchema, seed: number): Array<string> => {
  if (schema.pattern !== undefined) {
    try {
      const generated = fc.sample(fc.stringMatching(new RegExp(schema.pattern), { maxLength: 12 }), { seed, numRuns: 40 })
      // The shortest samples hold little but the pattern's structure; one per set of separators.
      const bySeparators = new Map<string, string>()
      for (const sample of generated.filter((g) => g.length > 0).sort((a, b) => a.length - b.length)) {
        const separators = [...new Set(sample.replace(/[\da-z]/gi, ""))].sort().join("")
        if (!bySeparators.has(separators)) bySeparators.set(separators, sample)
      }
      if (bySeparators.size > 0) return [...bySeparators.values()].slice(0, 3)
    } catch {
      // a pattern JavaScript cannot compile: the format's example below
    }
  }
  return [schema.format === "date" ? "2026-03-02" : schema.format === "date-time" ? "2026-03-02T07:00:00.000Z" : schema.format === "uuid" ? "00000000-0000-4000-8000-000000000001" : "a@b.c"]
}

/**
 * Long values aimed at super-linear matching, built from valid samples of the
 * field: a prefix of a sample up to a separator (or nothing), one of its
 * characters repeated to fill `length`, and a suffix no pattern of the API
 * accepts there — the shape of the strings that made `EmailAddress`
 * (`a@` + dots) and `Host` (colons) take seconds. At most `limit` of them,
 * each exactly `length` characters, in the same order for every length.
 */
export const longAttacks = (schema: JsonSchema, length: number, limit = 12, seed = 1): Array<string> => {
  const suffix = " !"
  // One character of each kind a sample has: a digit, a lower-case and an upper-case letter, each other character.
  const kind = (c: string) => (/\d/.test(c) ? "digit" : /[a-z]/.test(c) ? "lower" : /[A-Z]/.test(c) ? "upper" : c)
  const attacks: Array<string> = []
  for (const sample of samplesOf(schema, seed)) {
    const separators = [...sample].flatMap((c, i) => (/[\da-z]/i.test(c) ? [] : [i + 1]))
    const cuts = [0, ...separators].slice(0, 4)
    const pumps = [...new Map([...sample].map((c) => [kind(c), c])).values()].sort((a, b) => Number(/[\da-z]/i.test(a)) - Number(/[\da-z]/i.test(b)))
    for (const pump of pumps) {
      for (const cut of cuts) {
        const prefix = sample.slice(0, cut)
        attacks.push(prefix + pump.repeat(Math.max(1, length - prefix.length - suffix.length)) + suffix)
      }
    }
  }
  // Interleaved across samples, so a limit keeps some of each shape.
  return [...new Set(attacks)].slice(0, limit)
}

/** `value` (a JSON object or undefined) with `replacement` at `path`, making the objects and arrays on the way. */
export const withValueAt = (value: unknown, path: ReadonlyArray<string | number>, replacement: unknown): unknown => {
  if (path.length === 0) return replacement
  const [head, ...rest] = path
  if (typeof head === "number") {
    const list = Array.isArray(value) ? [...value] : []
    list[head] = withValueAt(list[head], rest, replacement)
    return list
  }
  const object = value !== null && typeof value === "object" && !Array.isArray(value) ? { ...(value as object) } : {}
  return { ...object, [head!]: withValueAt((object as Record<string, unknown>)[head!], rest, replacement) }
}
