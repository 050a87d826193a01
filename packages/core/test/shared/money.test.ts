import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { mulDivHalfEven, roundHalfEven } from "../../src/shared/money.ts"

/** The definition, in BigInt: the nearest integer, and on an exact half the even one. */
const oracle = (numerator: bigint, denominator: bigint): bigint => {
  const negative = numerator < 0n
  const n = negative ? -numerator : numerator
  const q = n / denominator
  const r = n - q * denominator
  const rounded = 2n * r > denominator || (2n * r === denominator && q % 2n === 1n) ? q + 1n : q
  return negative ? -rounded : rounded
}

describe("roundHalfEven", () => {
  it("rounds exact halves to the even neighbour and everything else to the nearest", () => {
    expect(roundHalfEven(5, 2)).toBe(2) // 2.5 → 2
    expect(roundHalfEven(7, 2)).toBe(4) // 3.5 → 4
    expect(roundHalfEven(2500, 1000)).toBe(2) // 2.5 → 2
    expect(roundHalfEven(2501, 1000)).toBe(3) // 2.501 → 3
    expect(roundHalfEven(2499, 1000)).toBe(2) // 2.499 → 2
    expect(roundHalfEven(-5, 2)).toBe(-2) // −2.5 → −2
    expect(roundHalfEven(-7, 2)).toBe(-4) // −3.5 → −4
    expect(Object.is(roundHalfEven(-1, 4), 0)).toBe(true) // −0.25 → 0, not −0
    expect(roundHalfEven(0, 7)).toBe(0)
  })

  it("agrees with the BigInt definition on any integers", () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), fc.integer({ min: 1, max: 1_000_000_000 }), (n, d) => {
        expect(roundHalfEven(n, d)).toBe(Number(oracle(BigInt(n), BigInt(d))))
      }),
      { numRuns: 2000 }
    )
  })

  it("multiplies exactly before it divides, even past 2^53", () => {
    // 10 000 000 m × 50 000 ml × 1 000 000 = 5·10^17 > 2^53; ÷ 10^8 = 5 000 000 000 exactly.
    expect(mulDivHalfEven(10_000_000, 50_000, 1_000_000, 100_000_000)).toBe(5_000_000_000)
    // 123 457 × 8 500 × 700 / 10^8 = 7345.6915 → 7346
    expect(mulDivHalfEven(123_457, 8_500, 700, 100_000_000)).toBe(7346)
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100_000_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 10_000_000 }),
        // Products reach 10^20; from 10^5 up every quotient is a safe integer.
        fc.integer({ min: 100_000, max: 1_000_000_000 }),
        (a, b, c, d) => {
          expect(mulDivHalfEven(a, b, c, d)).toBe(Number(oracle(BigInt(a) * BigInt(b) * BigInt(c), BigInt(d))))
        }
      ),
      { numRuns: 2000 }
    )
  })

  it("refuses a result beyond the safe integer range rather than rounding it silently", () => {
    expect(() => mulDivHalfEven(100_000_000, 100_000, 10_000_000, 1)).toThrow(RangeError)
  })

  it("refuses a denominator that is not a positive integer", () => {
    expect(() => roundHalfEven(1, 0)).toThrow(RangeError)
    expect(() => roundHalfEven(1, 1.5)).toThrow(RangeError)
    expect(() => roundHalfEven(0.5, 1)).toThrow(RangeError)
  })
})
