import { describe, expect, it } from "vitest"
import { normalizeVatNumber } from "../../src/contacts/rules.ts"

describe("contact VAT numbers", () => {
  it("a Romanian contact's number is a checked CUI, stored without RO", () => {
    expect(normalizeVatNumber("RO", "RO 14399840")).toBe("14399840")
    expect(normalizeVatNumber("RO", "14399841")).toBeUndefined()
  })

  it("a foreign number is taken as given, compact and upper case", () => {
    expect(normalizeVatNumber("DE", "de 123 456 789")).toBe("DE123456789")
    expect(normalizeVatNumber("FR", "FRXX999999999")).toBe("FRXX999999999")
    expect(normalizeVatNumber("DE", "x")).toBeUndefined()
    expect(normalizeVatNumber("DE", "DE 123/456")).toBeUndefined()
  })
})
