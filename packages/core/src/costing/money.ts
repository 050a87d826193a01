/**
 * Money is integer minor units. Every amount the comparison reports is an
 * exact ratio of integers rounded once, by this one rule: half to even
 * ("banker's rounding"), so rounding errors do not drift one way over many
 * amounts. Pure functions, exact for any integer inputs (BigInt when a product
 * leaves the safe-integer range).
 */

const SAFE_DIVIDEND = 2 ** 52

const roundBigHalfEven = (numerator: bigint, denominator: bigint): bigint => {
  const negative = numerator < 0n
  const n = negative ? -numerator : numerator
  let q = n / denominator
  const twice = (n - q * denominator) * 2n
  if (twice > denominator || (twice === denominator && q % 2n === 1n)) q += 1n
  return negative ? -q : q
}

const toSafeNumber = (value: bigint): number => {
  const n = Number(value)
  if (!Number.isSafeInteger(n)) throw new RangeError(`Amount ${value} exceeds the safe integer range`)
  return n
}

/**
 * `numerator / denominator` rounded half to even. Both are integers and the
 * denominator is positive.
 */
export const roundHalfEven = (numerator: number | bigint, denominator: number): number => {
  if (!Number.isSafeInteger(denominator) || denominator <= 0) {
    throw new RangeError(`The denominator must be a positive safe integer, got ${denominator}`)
  }
  if (typeof numerator === "bigint") return toSafeNumber(roundBigHalfEven(numerator, BigInt(denominator)))
  if (!Number.isSafeInteger(numerator)) throw new RangeError(`The numerator must be a safe integer, got ${numerator}`)
  if (Math.abs(numerator) > SAFE_DIVIDEND) return toSafeNumber(roundBigHalfEven(BigInt(numerator), BigInt(denominator)))
  const negative = numerator < 0
  const n = negative ? -numerator : numerator
  let q = Math.floor(n / denominator)
  let r = n - q * denominator
  if (r < 0) {
    q -= 1
    r += denominator
  } else if (r >= denominator) {
    q += 1
    r -= denominator
  }
  const twice = r * 2
  if (twice > denominator || (twice === denominator && q % 2 === 1)) q += 1
  return negative && q !== 0 ? -q : q
}

/** `a · b · c / denominator` of integers, rounded half to even once. */
export const mulDivHalfEven = (a: number, b: number, c: number, denominator: number): number => {
  const ab = a * b
  if (Number.isSafeInteger(ab)) {
    const abc = ab * c
    if (Number.isSafeInteger(abc)) return roundHalfEven(abc, denominator)
  }
  return roundHalfEven(BigInt(a) * BigInt(b) * BigInt(c), denominator)
}
