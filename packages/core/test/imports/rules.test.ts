import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  entitySpecs,
  headerKey,
  issueOrder,
  matchKey,
  normalizeRomanian,
  parseAmount,
  parseBoolean,
  parseDate,
  parseNumber,
  resolveColumns,
  rowTexts,
  showValue
} from "../../src/imports/rules.ts"

describe("text", () => {
  it("turns ş ţ with a cedilla into ș ț with a comma below, composed, and leaves ASCII as it is", () => {
    expect(normalizeRomanian("Bra\u015Fov, Pite\u015Fti, \u0162ar\u0103, \u015Ei")).toBe("Bra\u0219ov, Pite\u0219ti, \u021Aar\u0103, \u0218i")
    expect(normalizeRomanian("Bra\u0219ov")).toBe("Bra\u0219ov")
    expect(normalizeRomanian("a\u0306")).toBe("\u0103")
    expect(normalizeRomanian("Cluj-Napoca 1")).toBe("Cluj-Napoca 1")
  })

  it("compares headers without diacritics, case, spaces or punctuation", () => {
    expect(headerKey("Nr. Reg. Com.")).toBe("nrregcom")
    expect(headerKey("Dată")).toBe("data")
    expect(headerKey("Județ")).toBe("judet")
    expect(headerKey("CIF/CNP")).toBe("cifcnp")
  })
})

describe("values", () => {
  it("reads amounts written the Romanian and the English way as two-decimal strings", () => {
    expect(parseAmount("1.234,56")).toBe("1234.56")
    expect(parseAmount("1,234.56")).toBe("1234.56")
    expect(parseAmount("1 234.5")).toBe("1234.50")
    expect(parseAmount("1234,5")).toBe("1234.50")
    expect(parseAmount("1.234")).toBe("1234.00")
    expect(parseAmount("1.234.567")).toBe("1234567.00")
    expect(parseAmount("12.5")).toBe("12.50")
    expect(parseAmount("007")).toBe("7.00")
  })

  it("refuses what is not a non-negative amount with at most two decimals and twelve digits", () => {
    for (const bad of ["", "-5", "1,2,3", "1.23.4", "12.345,6,7", "1.2345", "abc", "1234567890123", "1,234"]) {
      expect(parseAmount(bad), bad).toBeUndefined()
    }
  })

  it("an amount read back is the same amount", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 999_999_999 }), fc.integer({ min: 0, max: 99 }), (whole, cents) => {
      const text = `${whole}.${String(cents).padStart(2, "0")}`
      expect(parseAmount(text)).toBe(text)
      expect(parseAmount(text.replace(".", ","))).toBe(text)
    }))
  })

  it("reads numbers with a comma or a dot", () => {
    expect(parseNumber("7,5")).toBe(7.5)
    expect(parseNumber("-3.25")).toBe(-3.25)
    expect(parseNumber("1 200")).toBe(1200)
    expect(parseNumber("1e3")).toBeUndefined()
    expect(parseNumber("")).toBeUndefined()
  })

  it("reads Romanian and ISO dates that exist", () => {
    expect(parseDate("05.03.2026")).toBe("2026-03-05")
    expect(parseDate("5/3/2026")).toBe("2026-03-05")
    expect(parseDate("05-03-2026")).toBe("2026-03-05")
    expect(parseDate("2026-03-05T10:00:00Z")).toBe("2026-03-05")
    expect(parseDate("30.02.2026")).toBeUndefined()
    // Year 0 is a calendar date but not one of the API's (IsoDate): an expense could not hold it.
    expect(parseDate("01.01.0000")).toBeUndefined()
    expect(parseDate("2026/03/05")).toBeUndefined()
    expect(parseDate("soon")).toBeUndefined()
  })

  it("reads yes and no in Romanian and English", () => {
    for (const yes of ["Da", "yes", "TRUE", "1", "x", "Activ"]) expect(parseBoolean(yes), yes).toBe(true)
    for (const no of ["Nu", "no", "false", "0", "inactiv"]) expect(parseBoolean(no), no).toBe(false)
    expect(parseBoolean("poate")).toBeUndefined()
  })
})

describe("converting a row", () => {
  const contact = entitySpecs.contacts.convert

  it("a Romanian contact's VAT number is a checked CUI without RO, and the row is matched by country and number", () => {
    const row = contact({ name: "Acme SRL", vat_number: "RO 14399840" })
    expect(row.issues).toEqual([])
    expect(row.fields).toMatchObject({ name: "Acme SRL", country: "RO", vat_number: "14399840" })
    expect(row.key).toBe("RO:14399840")
    expect(contact({ name: "Acme SRL", vat_number: "14399841" }).issues).toEqual([
      { column: "vat_number", message: expect.stringContaining("not a valid Romanian CUI") }
    ])
  })

  it("a foreign VAT number is taken compact and upper case; a country named Romania is RO", () => {
    expect(contact({ name: "GmbH", country: "de", vat_number: "de 123 456 789" })).toMatchObject({
      fields: { country: "DE", vat_number: "DE123456789" },
      key: "DE:DE123456789",
      issues: []
    })
    expect(contact({ name: "X", country: "DE", vat_number: "x" }).issues).toEqual([
      { column: "vat_number", message: "must be 2 to 30 letters and digits" }
    ])
    expect(contact({ name: "X", country: "România" }).fields.country).toBe("RO")
    expect(contact({ name: "X", country: "Narnia" }).issues.map((i) => i.column)).toEqual(["country"])
  })

  it("reads the first of several emails, joins the address parts and requires the name", () => {
    expect(contact({ name: "X", email: "a@b.ro; c@d.ro", address: "Str. Mare 1", city: "Cluj", county: "CJ" }).fields).toMatchObject({
      email: "a@b.ro",
      address: "Str. Mare 1, Cluj, CJ"
    })
    expect(contact({ name: "" }).issues).toEqual([{ column: "name", message: "is required" }])
    expect(contact({ name: "X", email: "not-an-email" }).issues.map((i) => i.column)).toEqual(["email"])
    expect(contact({ name: "X", vat_number: "" })).toMatchObject({ fields: { vat_number: null }, key: null })
  })

  it("a location is matched by its code in any case, a vehicle by its plate, an expense by its reference", () => {
    expect(entitySpecs.locations.convert({ name: "Depot", code: "DEP-1" }).key).toBe("dep-1")
    expect(entitySpecs.locations.convert({ name: "Depot", code: "-bad" }).issues.map((i) => i.column)).toEqual(["code"])
    const vehicle = entitySpecs.fleet_vehicles.convert({ plate: "cj 12 abc", fuel_type: "diesel" })
    expect(vehicle).toMatchObject({ key: "CJ12ABC", fields: { plate: "CJ12ABC" } })
    expect(entitySpecs.fleet_vehicles.convert({ fuel_type: "diesel" }).issues).toEqual([{ column: "plate", message: "is required" }])
    const expense = entitySpecs.expenses.convert({ external_ref: "F-12", description: "Fuel", amount: "100,5", expense_date: "01.02.2026" })
    expect(expense).toMatchObject({ key: "F-12", fields: { amount: "100.50", expense_date: "2026-02-01" } })
  })
})

describe("matchKey", () => {
  it("is the same for a converted row and the record stored from it", () => {
    const row = entitySpecs.contacts.convert({ name: "Acme", vat_number: "ro14399840" })
    expect(matchKey("contacts", { ...row.fields, id: "x", created_at: "2026-01-01T00:00:00.000Z" })).toBe(row.key)
    expect(matchKey("locations", { code: "AbC" })).toBe(matchKey("locations", { code: "abc" }))
    expect(matchKey("expenses", { external_ref: null })).toBeNull()
    expect(matchKey("contacts", { country: "RO", vat_number: null })).toBeNull()
  })
})

describe("columns", () => {
  it("finds fields by the caller's mapping, then the preset, then the aliases", () => {
    const resolved = resolveColumns("contacts", "smartbill", ["Denumire", "CIF/CNP", "Cod fiscal", "Oras"], { city: "Oras" })
    expect(resolved).toEqual({
      ok: true,
      columns: {
        indexes: { city: 3, name: 0, vat_number: 1 },
        names: { city: "Oras", name: "Denumire", vat_number: "CIF/CNP" }
      }
    })
  })

  it("says why a header cannot be read", () => {
    expect(resolveColumns("contacts", "generic", ["foo", "bar"], {})).toMatchObject({ ok: false, code: "no_known_column" })
    expect(resolveColumns("contacts", "generic", ["CUI"], {})).toMatchObject({ ok: false, code: "missing_column" })
    expect(resolveColumns("contacts", "generic", ["Nume"], { colour: "Nume" })).toMatchObject({ ok: false, code: "unknown_field" })
    expect(resolveColumns("contacts", "generic", ["Nume"], { name: "Denumire" })).toMatchObject({ ok: false, code: "unknown_column" })
  })

  it("reads a row's texts trimmed by field, and refuses a row longer than the header", () => {
    const resolved = resolveColumns("contacts", "generic", ["Nume", "CUI"], {})
    if (!resolved.ok) throw new Error(resolved.message)
    expect(rowTexts(resolved.columns, 2, [" Acme ", "RO1"])).toEqual({ name: "Acme", vat_number: "RO1" })
    expect(rowTexts(resolved.columns, 2, ["Acme"])).toEqual({ name: "Acme", vat_number: "" })
    expect(rowTexts(resolved.columns, 2, ["a", "b", "c"])).toBe("has 3 fields, the header has 2")
  })
})

describe("showing", () => {
  it("shows values as text and sorts issues by row, then column", () => {
    expect([showValue(null), showValue(undefined), showValue(12.5), showValue(true)]).toEqual([null, null, "12.5", "true"])
    const issues = [
      { row: 3, column: "b", message: "" },
      { row: 2, column: "z", message: "" },
      { row: 3, column: "a", message: "" },
      { row: null, column: null, message: "" }
    ]
    expect([...issues].sort(issueOrder).map((i) => `${i.row}${i.column}`)).toEqual(["nullnull", "2z", "3a", "3b"])
  })
})
