import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { currencyExponent, divideHalfAwayFromZero, formatMinor, parseMinor } from "../../src/shared/money.ts"

describe("amounts as decimal strings in the currency's exponent", () => {
  it("formats minor units with the currency's decimals", () => {
    expect(formatMinor(125_000, "RON")).toBe("1250.00")
    expect(formatMinor(0, "EUR")).toBe("0.00")
    expect(formatMinor(5, "RON")).toBe("0.05")
    expect(formatMinor(-5, "RON")).toBe("-0.05")
    expect(formatMinor(1250, "JPY")).toBe("1250")
    expect(formatMinor(1_250_500, "KWD")).toBe("1250.500")
    expect([currencyExponent("RON"), currencyExponent("JPY"), currencyExponent("BHD")]).toEqual([2, 0, 3])
  })

  it("parses at most the currency's decimals and 12 integer digits", () => {
    expect(parseMinor("1250", "RON")).toBe(125_000)
    expect(parseMinor("1250.5", "RON")).toBe(125_050)
    expect(parseMinor("1250.50", "RON")).toBe(125_050)
    expect(parseMinor("999999999999.99", "RON")).toBe(99_999_999_999_999)
    for (const bad of ["1250.505", "1e3", "-1", "01", "1,5", "", ".5", "1.", "1000000000000"]) {
      expect(parseMinor(bad, "RON")).toBeUndefined()
    }
    expect(parseMinor("10.5", "JPY")).toBeUndefined()
  })

  it("format and parse are inverse for every amount and exponent", () => {
    const currencies = fc.constantFrom("RON", "JPY", "KWD")
    // Every amount with at most 12 integer digits, in any exponent.
    const amounts = currencies.chain((currency) =>
      fc.tuple(fc.integer({ min: 0, max: 10 ** (12 + currencyExponent(currency)) - 1 }), fc.constant(currency))
    )
    fc.assert(fc.property(amounts, ([minor, currency]) => {
      expect(parseMinor(formatMinor(minor, currency), currency)).toBe(minor)
    }))
  })

  it("rounds half away from zero, exactly", () => {
    expect(divideHalfAwayFromZero(5n, 10n)).toBe(1n)
    expect(divideHalfAwayFromZero(-5n, 10n)).toBe(-1n)
    expect(divideHalfAwayFromZero(4n, 10n)).toBe(0n)
    expect(divideHalfAwayFromZero(15n, 10n)).toBe(2n)
    expect(divideHalfAwayFromZero(25n, 10n)).toBe(3n)
    fc.assert(fc.property(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), fc.bigInt({ min: 1n, max: 10n ** 9n }), (n, d) => {
      const q = divideHalfAwayFromZero(n, d)
      // |n/d − q| ≤ 1/2, and exactly 1/2 only when q is farther from zero.
      const twice = 2n * (n - q * d)
      const abs = twice < 0n ? -twice : twice
      expect(abs <= d).toBe(true)
      if (abs === d) expect(q === 0n ? false : (q > 0n) === (n > 0n)).toBe(true)
    }))
  })
})
