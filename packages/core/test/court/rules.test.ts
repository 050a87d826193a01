import { describe, expect, it } from "vitest"
import { normalizeCaseNumber } from "../../src/court/rules.ts"

describe("court file numbers", () => {
  it("are <number>/<court code>/<year>, spaces ignored", () => {
    expect(normalizeCaseNumber("1234/3/2026")).toBe("1234/3/2026")
    expect(normalizeCaseNumber(" 1234 / 3 / 2026 ")).toBe("1234/3/2026")
    expect(normalizeCaseNumber("12345/299/2019")).toBe("12345/299/2019")
  })

  it("may carry the asterisks of a retrial and the /a of an associated file", () => {
    expect(normalizeCaseNumber("1234/3/2026*")).toBe("1234/3/2026*")
    expect(normalizeCaseNumber("1234/3/2026**")).toBe("1234/3/2026**")
    expect(normalizeCaseNumber("1234/3/2026/A1")).toBe("1234/3/2026/a1")
    expect(normalizeCaseNumber("1234/3/2026/a1.2")).toBe("1234/3/2026/a1.2")
    expect(normalizeCaseNumber("1234/3/2026*/a3")).toBe("1234/3/2026*/a3")
  })

  it("refuse anything else, and years outside 1990 to 2099", () => {
    for (const bad of [
      "",
      "1234",
      "1234/2026",
      "01234/3/2026",
      "1234/0/2026",
      "1234/3/26",
      "1234/3/1989",
      "1234/3/2100",
      "1234/3/9999",
      "1234/3/2026****",
      "1234/3/2026/b1",
      "1234/3/2026/a0",
      "12345678/3/2026",
      "1234-3-2026"
    ]) {
      expect(normalizeCaseNumber(bad), bad).toBeUndefined()
    }
  })
})
