import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { compactPlate, countyCodes, normalizePlate } from "../../src/fleet/rules.ts"

describe("Romanian plates", () => {
  it("are the same plate however they are written", () => {
    for (const written of ["b-123-abc", "B 123 ABC", "B123ABC", "b 123-abc", " B.123.ABC "]) {
      expect(normalizePlate(written)).toBe("B123ABC")
    }
    expect(normalizePlate("cj 12 xyz")).toBe("CJ12XYZ")
  })

  it("take two digits in a county and two or three in Bucharest", () => {
    expect(normalizePlate("B 12 ABC")).toBe("B12ABC")
    expect(normalizePlate("CJ 123 ABC")).toBeUndefined()
    expect(normalizePlate("CJ 1 ABC")).toBeUndefined()
    expect(normalizePlate("B 1234 ABC")).toBeUndefined()
  })

  it("refuse an unknown county, Q anywhere in the letters, and I or O first", () => {
    expect(normalizePlate("XX 12 ABC")).toBeUndefined()
    expect(normalizePlate("BQ 12 ABC")).toBeUndefined()
    expect(normalizePlate("B 12 AQC")).toBeUndefined()
    expect(normalizePlate("B 12 IAB")).toBeUndefined()
    expect(normalizePlate("B 12 OAB")).toBeUndefined()
    expect(normalizePlate("B 12 AIO")).toBe("B12AIO")
  })

  it("take temporary plates (0 then a non-zero digit, 3 to 6 digits) and diplomatic ones", () => {
    expect(normalizePlate("B 012")).toBe("B012")
    expect(normalizePlate("CJ 012345")).toBe("CJ012345")
    expect(normalizePlate("B 01")).toBeUndefined()
    expect(normalizePlate("B 0012")).toBeUndefined()
    expect(normalizePlate("B 0123456")).toBeUndefined()
    expect(normalizePlate("CD 123 456")).toBe("CD123456")
    expect(normalizePlate("TC-123456")).toBe("TC123456")
    expect(normalizePlate("CO 12345")).toBeUndefined()
  })

  it("refuse what is not a plate at all", () => {
    for (const bad of ["", "   ", "B", "123ABC", "B 123 AB", "B 123 ABCD", "B_123_ABC", "Б 123 ABC", "B 12 ABÇ"]) {
      expect(normalizePlate(bad), bad).toBeUndefined()
    }
  })

  it("normalise to a fixed point: any spelling of a valid plate stores as the same text, which is itself valid", () => {
    const county = fc.constantFrom(...[...countyCodes].filter((c) => c !== "B"))
    const letter = fc.constantFrom(..."ABCDEFGHJKLMNPRSTUVWXYZ")
    const anyLetter = fc.constantFrom(..."ABCDEFGHIJKLMNOPRSTUVWXYZ")
    const digits = (n: number) => fc.array(fc.constantFrom(..."0123456789"), { minLength: n, maxLength: n }).map((d) => d.join(""))
    const plate = fc.oneof(
      fc.tuple(county, digits(2), letter, anyLetter, anyLetter).map((p) => p.join("")),
      fc.tuple(fc.constant("B"), fc.oneof(digits(2), digits(3)), letter, anyLetter, anyLetter).map((p) => p.join(""))
    )
    const spelled = fc.tuple(plate, fc.array(fc.constantFrom("", " ", "-", "."), { minLength: 10, maxLength: 10 }), fc.boolean())
    fc.assert(fc.property(spelled, ([p, separators, lower]) => {
      const written = [...p].map((c, i) => c + separators[i]).join("")
      const stored = normalizePlate(lower ? written.toLowerCase() : written)
      expect(stored).toBe(p)
      expect(normalizePlate(stored!)).toBe(stored)
      expect(compactPlate(stored!)).toBe(stored)
    }))
  })
})
