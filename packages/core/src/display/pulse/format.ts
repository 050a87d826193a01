/**
 * Figures written the local way, by hand rather than through `Intl`, so the
 * answer is the same on every runtime whatever its locale data:
 * Romanian "12.345,67 lei", English "RON 12,345.67".
 */

export type Locale = "ro" | "en"

/** Digits in groups of three from the right ("1234567" → "1.234.567"). */
const group = (digits: string, separator: string): string => {
  let out = digits.slice(0, digits.length % 3 || 3)
  for (let i = out.length; i < digits.length; i += 3) out += separator + digits.slice(i, i + 3)
  return out
}

/** RON minor units as the locale writes an amount of lei. */
export const formatLei = (minor: number, locale: Locale): string => {
  const sign = minor < 0 ? "-" : ""
  const digits = String(Math.abs(minor)).padStart(3, "0")
  const whole = digits.slice(0, -2)
  const cents = digits.slice(-2)
  return locale === "ro"
    ? `${sign}${group(whole, ".")},${cents} lei`
    : `${sign}RON ${group(whole, ",")}.${cents}`
}

/** A whole number as the locale groups it ("1.234" / "1,234"). */
export const formatCount = (n: number, locale: Locale): string => group(String(n), locale === "ro" ? "." : ",")

/**
 * A count with its noun. Romanian puts "de" between a number and its noun
 * when the number's last two digits are 00 or 20–99 (and the number is not
 * 0): "1 factură", "19 facturi", "20 de facturi", "101 facturi", "120 de facturi".
 */
export const counted = (n: number, locale: Locale, forms: { readonly one: string; readonly many: string }): string => {
  if (n === 1) return `1 ${forms.one}`
  const lastTwo = n % 100
  const de = locale === "ro" && n !== 0 && (lastTwo === 0 || lastTwo >= 20)
  return `${formatCount(n, locale)} ${de ? "de " : ""}${forms.many}`
}
