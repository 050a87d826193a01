import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { fieldConditions, Filters, ownCondition, QueryBoolean } from "../../src/shared/filters.ts"
import { IsoDate } from "../../src/shared/schemas.ts"

const Filter = Schema.Struct({
  status: Schema.optionalKey(Schema.Literals(["open", "closed"])),
  day_from: Schema.optionalKey(IsoDate.annotate({ description: "day on or after" }).pipe(Filters.from("day"))),
  day_to: Schema.optionalKey(IsoDate.pipe(Filters.to("day"))),
  q: Schema.optionalKey(Schema.String.pipe(Filters.contains("name"))),
  settled: Schema.optionalKey(QueryBoolean.pipe(Filters.present("settled_at"))),
  late: Schema.optionalKey(QueryBoolean.pipe(Filters.own))
})

describe("fieldConditions", () => {
  it("gives no condition for an absent field, so an empty filter is no filter", () => {
    expect(fieldConditions(Filter, {})).toEqual([])
  })

  it("reads each present field's match from its schema, in the schema's order, equality on its own name by default", () => {
    expect(fieldConditions(Filter, { late: false, q: "ab", status: "open", day_to: "2026-01-31", settled: true })).toEqual([
      { field: "status", column: "status", kind: "equals", value: "open" },
      { field: "day_to", column: "day", kind: "to", value: "2026-01-31" },
      { field: "q", column: "name", kind: "contains", value: "ab" },
      { field: "settled", column: "settled_at", kind: "present", value: true },
      { field: "late", column: "late", kind: "own", value: false }
    ])
  })

  it("keeps the field's other annotations: the description still reaches the API's query", () => {
    expect(Schema.resolveAnnotations(Filter.fields.day_from)?.description).toBe("day on or after")
  })
})

describe("ownCondition", () => {
  const [late] = fieldConditions(Filter, { late: true })
  it("asks the store for its condition with the decoded value", () => {
    expect(ownCondition({ late: (v: boolean) => `late=${v}` }, late!)).toBe("late=true")
  })
  it("is a defect when the store gives none", () => {
    expect(() => ownCondition({}, late!)).toThrow(/late/)
  })
})

describe("QueryBoolean", () => {
  it("reads true and false from a query string and nothing else", () => {
    const decode = Schema.decodeUnknownSync(QueryBoolean)
    expect(decode("true")).toBe(true)
    expect(decode("false")).toBe(false)
    expect(() => decode("yes")).toThrow()
  })
})
