import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { jsonBodyIssue } from "../src/api/requestBody.ts"

/** What the earlier check found, walking the parsed value recursively: the reference the one-pass scan must agree with. */
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const reference = (value: unknown, path = "body"): { field: string; issue: string } | undefined => {
  const check = (text: string, at: string) =>
    text.includes("\u0000")
      ? { field: at, issue: "must not contain the NUL character (\\u0000)" }
      : loneSurrogate.test(text)
      ? { field: at, issue: "must not contain a lone UTF-16 surrogate (half of a surrogate pair)" }
      : undefined
  if (typeof value === "string") return check(value, path)
  if (typeof value !== "object" || value === null) return undefined
  for (const [key, inner] of Object.entries(value)) {
    const at = path === "body" ? key : `${path}.${key}`
    const found = check(key, at) ?? reference(inner, at)
    if (found !== undefined) return found
  }
  return undefined
}

const text = fc.string({ unit: fc.constantFrom("a", ".", "\"", "\\", "\u0000", "\ud800", "\udc00", "\ud83d", "\ude9a", "é", "🚚", "{", "]"), maxLength: 6 })

describe("the one-pass check of a JSON body", () => {
  it("finds the field the recursive walk over the parsed value found, in any JSON value", () => {
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: "small" }, text, fc.integer(), fc.constant(null), fc.array(tie("node"), { maxLength: 3 }), fc.dictionary(text, tie("node"), { maxKeys: 3 }))
    })).node
    fc.assert(fc.property(value, (v) => {
      expect(jsonBodyIssue(JSON.stringify(v))).toEqual(reference(v))
      // Whitespace between tokens changes nothing.
      expect(jsonBodyIssue(JSON.stringify(v, null, 2))).toEqual(reference(v))
    }), { numRuns: 5000 })
  })

  it("tells a surrogate pair, escaped or not, from a lone half, and an escaped backslash from an escape", () => {
    expect(jsonBodyIssue('{"name":"Depot \\ud83d\\ude9a"}')).toBeUndefined()
    expect(jsonBodyIssue('{"name":"Depot \\ud83d🚚"}')).toMatchObject({ field: "name" })
    expect(jsonBodyIssue('{"name":"Depot \\\\u0000 North"}')).toBeUndefined()
    expect(jsonBodyIssue('{"a":{"b":[1,{"c":"x\\u0000"}]}}')).toEqual({ field: "a.b.1.c", issue: "must not contain the NUL character (\\u0000)" })
    expect(jsonBodyIssue('"\\udc00"')).toEqual({ field: "body", issue: "must not contain a lone UTF-16 surrogate (half of a surrogate pair)" })
    // Not JSON: left for the parser to answer invalid_json.
    expect(jsonBodyIssue('{"a":"\\u0000"')).toBeUndefined()
  })

  it("stops at the 65th level of nesting, however deep the text goes, without recursion", () => {
    const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth)
    expect(jsonBodyIssue(nested(64))).toBeUndefined()
    expect(jsonBodyIssue(nested(65))).toEqual({ field: "body", issue: "must not nest arrays and objects more than 64 levels deep" })
    expect(jsonBodyIssue(nested(1_000_000))).toMatchObject({ field: "body" })
    expect(jsonBodyIssue(`{"a":"${"[".repeat(100)}"}`)).toBeUndefined()
  })
})
