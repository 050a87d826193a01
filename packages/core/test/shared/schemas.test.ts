import fc from "fast-check"
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { characterCount, Instant, IsoDate, NonBlankString, Text, Thousandths } from "../../src/shared/schemas.ts"

describe("string limits count characters, not UTF-16 units", () => {
  it("200 emoji fit a 255-character limit; 256 characters do not", () => {
    const emoji = "🚚".repeat(200)
    expect(emoji.length).toBe(400)
    expect(characterCount(emoji)).toBe(200)
    expect(Schema.is(NonBlankString(255))(emoji)).toBe(true)
    expect(Schema.is(Text(255))("ă".repeat(255))).toBe(true)
    expect(Schema.is(Text(255))("ă".repeat(256))).toBe(false)
    expect(Schema.is(Text(3))("👍🏽a")).toBe(true) // a thumb and its skin tone are two code points
  })
})

describe("instants a caller sends", () => {
  it("need a date, a time and an offset, within the instant range (a day inside years 1 to 9999 at each end)", () => {
    for (const ok of ["2026-03-02T07:00:00+02:00", "2026-03-02T07:00:00Z", "2026-03-02T07:00Z", "9999-12-30T23:59:59.999Z", "0001-01-02T00:00:00Z", "9999-12-31T09:00:00+14:00", "0001-01-01T12:00:00-12:00"]) {
      expect(Schema.is(Instant)(ok)).toBe(true)
    }
    for (const bad of ["2026-03-02", "2026-03-02T07:00:00", "2026-02-30T00:00:00Z", "+275760-09-13T00:00:00.000Z", "10000-01-01T00:00:00Z", "0000-12-31T00:00:00Z", "2026-03-02T24:00:00Z", "2026-03-02T07:00:00+25:00", "9999-12-31T23:00:00-05:00", "0000-01-01T00:00:00Z", "0001-01-01T00:00:00+01:00", "9999-12-31T00:00:00Z", "0001-01-01T23:59:59Z"]) {
      expect(Schema.is(Instant)(bad)).toBe(false)
    }
  })
})

describe("dates a caller sends", () => {
  it("are calendar dates of years 0001 to 9999", () => {
    for (const ok of ["0001-01-01", "9999-12-31", "2028-02-29"]) expect(Schema.is(IsoDate)(ok)).toBe(true)
    for (const bad of ["0000-12-31", "10000-01-01", "+10000-01-01", "2027-02-29", "2026-1-01"]) expect(Schema.is(IsoDate)(bad)).toBe(false)
  })
})

describe("numbers with at most three decimals", () => {
  it("take every decimal written with three places, and nothing a numeric(…, 3) would round", () => {
    const is = Schema.is(Thousandths(1_000_000))
    fc.assert(fc.property(fc.integer({ min: 0, max: 1_000_000_000 }), (k) => is(Number((k / 1000).toFixed(3)))))
    for (const ok of [0, 1.005, 0.3, 999999.999, 1_000_000]) expect(is(ok)).toBe(true)
    for (const bad of [7.018543298670652e-12, 5e-323, 0.1 + 0.2, 1.0005, -0.001, 1_000_000.001]) expect(is(bad)).toBe(false)
  })
})
