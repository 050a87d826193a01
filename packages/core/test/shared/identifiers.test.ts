import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { cuiControlDigit, normalizeCui } from "../../src/shared/identifiers.ts"

describe("Romanian CUI/CIF", () => {
  it("accepts real codes with and without the RO prefix, stored as digits", () => {
    // 14399840 and 18547290 are registered companies; 990 and 19 are the shortest valid shapes.
    for (const [given, stored] of [
      ["14399840", "14399840"],
      ["RO14399840", "14399840"],
      ["ro 18547290", "18547290"],
      [" RO 18547290 ", "18547290"],
      ["990", "990"],
      ["19", "19"]
    ]) expect(normalizeCui(given!)).toBe(stored)
  })

  it("refuses a wrong control digit, letters, a leading zero, and lengths outside 2..10", () => {
    for (const bad of ["14399841", "1439984X", "014399840", "1", "12345678901", "RO", "", "RO-14399840", "RO14399840X"]) {
      expect(normalizeCui(bad)).toBeUndefined()
    }
  })

  it("the design's rule: weights 7,5,3,2,1,7,5,3,2 on the left-padded body, sum × 10 mod 11, 10 → 0", () => {
    // 1439984: 0·7+0·5+1·3+4·2+3·1+9·7+9·5+8·3+4·2 = 154; 1540 mod 11 = 0.
    expect(cuiControlDigit("1439984")).toBe(0)
    fc.assert(fc.property(fc.integer({ min: 1, max: 999_999_999 }), (n) => {
      const body = String(n)
      const digits = body.padStart(9, "0").split("").map(Number)
      const sum = digits.reduce((acc, d, i) => acc + d * [7, 5, 3, 2, 1, 7, 5, 3, 2][i]!, 0)
      const control = (sum * 10) % 11 % 10
      expect(normalizeCui(`${body}${control}`)).toBe(`${body}${control}`)
      expect(normalizeCui(`${body}${(control + 1) % 10}`)).toBeUndefined()
    }))
  })
})
