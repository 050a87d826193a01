import { MAX_AMOUNT_INTEGER_DIGITS } from "./limits.ts"

/**
 * Money at the edges: amounts are stored and computed as integer minor units
 * and shown as decimal strings in the currency's exponent ("1250.00", "0.00",
 * "1250" for JPY). Every conversion goes through here, so a currency's
 * exponent is decided in one place.
 */

/** ISO 4217 minor-unit exponents that are not 2 (funds and metals excluded). */
const exponents: Readonly<Record<string, number>> = {
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0, UYI: 0, VND: 0, VUV: 0,
  XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3
}

/** Digits after the decimal point of a currency's minor unit (2 unless ISO 4217 says otherwise). */
export const currencyExponent = (currency: string): number => exponents[currency] ?? 2

/** Largest amount any API field accepts: 12 integer digits, so minor units stay far inside 2^53 (limits.ts). */
export { MAX_AMOUNT_INTEGER_DIGITS }

/** The largest amount in minor units of a currency: 12 integer digits and its decimals (999999999999.99 RON). */
export const maxMinor = (currency: string): number => 10 ** (MAX_AMOUNT_INTEGER_DIGITS + currencyExponent(currency)) - 1

/** Minor units as the decimal string of the currency: 125000 RON → "1250.00", −5 → "-0.05". */
export const formatMinor = (minor: number, currency: string): string => {
  if (!Number.isSafeInteger(minor)) throw new RangeError(`Not an amount in minor units: ${minor}`)
  const exponent = currencyExponent(currency)
  const digits = String(Math.abs(minor)).padStart(exponent + 1, "0")
  const sign = minor < 0 ? "-" : ""
  return exponent === 0 ? sign + digits : `${sign}${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`
}

/**
 * A decimal string as minor units of the currency, or undefined when it is not
 * one: at most the currency's exponent of decimals, at most 12 integer digits,
 * no sign, no exponent notation ("1250", "1250.5", "1250.50" → 125050 in RON).
 */
export const parseMinor = (text: string, currency: string): number | undefined => {
  const exponent = currencyExponent(currency)
  const match = /^(0|[1-9]\d*)(?:\.(\d+))?$/.exec(text)
  if (match === null) return undefined
  const [, whole = "", fraction = ""] = match
  if (whole.length > MAX_AMOUNT_INTEGER_DIGITS || fraction.length > exponent) return undefined
  return Number(whole + fraction.padEnd(exponent, "0"))
}

/** An exact decimal: `units / 10^scale` with `units` an integer. */
export interface Decimal {
  readonly units: bigint
  readonly scale: number
}

/** A non-negative decimal string with at most `maxScale` decimals and 12 integer digits, or undefined. */
export const parseDecimal = (text: string, maxScale: number): Decimal | undefined => {
  const match = /^(0|[1-9]\d*)(?:\.(\d+))?$/.exec(text)
  if (match === null) return undefined
  const [, whole = "", fraction = ""] = match
  if (whole.length > MAX_AMOUNT_INTEGER_DIGITS || fraction.length > maxScale) return undefined
  return { units: BigInt(whole + fraction), scale: fraction.length }
}

/**
 * `numerator / denominator` rounded half away from zero ("commercial"
 * rounding: 0.5 → 1, −0.5 → −1), exactly, for a positive denominator.
 */
export const divideHalfAwayFromZero = (numerator: bigint, denominator: bigint): bigint => {
  if (denominator <= 0n) throw new RangeError("The denominator must be positive")
  const negative = numerator < 0n
  const n = negative ? -numerator : numerator
  const q = (n * 2n + denominator) / (denominator * 2n)
  return negative ? -q : q
}

/** A bigint that must fit a safe integer (amounts in minor units). */
export const toSafeInteger = (value: bigint): number => {
  const n = Number(value)
  if (!Number.isSafeInteger(n)) throw new RangeError(`Amount ${value} exceeds the safe integer range`)
  return n
}

// ---- Half to even: the cost comparison's rounding ------------------------------

/*
 * Every amount the cost comparison reports is an exact ratio of integers
 * rounded once, by half to even ("banker's rounding"), so rounding errors do
 * not drift one way over many amounts. Exact for any integer inputs (BigInt
 * when a product leaves the safe-integer range).
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

/**
 * `numerator / denominator` rounded half to even. Both are integers and the
 * denominator is positive.
 */
export const roundHalfEven = (numerator: number | bigint, denominator: number): number => {
  if (!Number.isSafeInteger(denominator) || denominator <= 0) {
    throw new RangeError(`The denominator must be a positive safe integer, got ${denominator}`)
  }
  if (typeof numerator === "bigint") return toSafeInteger(roundBigHalfEven(numerator, BigInt(denominator)))
  if (!Number.isSafeInteger(numerator)) throw new RangeError(`The numerator must be a safe integer, got ${numerator}`)
  if (Math.abs(numerator) > SAFE_DIVIDEND) return toSafeInteger(roundBigHalfEven(BigInt(numerator), BigInt(denominator)))
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
