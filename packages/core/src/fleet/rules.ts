/**
 * Romanian registration plates (docs/decisions.md, "Design: shared by the areas": "Plates are stored upper case without
 * spaces or dashes"; the accepted formats are decided in docs/decisions.md,
 * "Fleet vehicles and court cases").
 *
 * A plate is read in any letter case, with spaces, hyphens or dots between
 * its groups ("b-123-abc", "B 123 ABC" and "B123ABC" are the same plate) and
 * stored as the compact upper-case text. It must then be one of:
 *
 * - a standard plate: a county code, two digits (Bucharest, `B`: two or
 *   three) and three letters, the letters never Q and the first never I or O
 *   (they read as 1 and 0): `CJ12ABC`, `B123ABC`;
 * - a temporary ("red") plate: a county code and three to six digits, the
 *   first 0 and the second not: `B0123`, `CJ012345`;
 * - a diplomatic or consular plate: `CD`, `TC` or `CO` and six digits.
 */

/** The 41 counties' codes and Bucharest's `B`. */
export const countyCodes: ReadonlySet<string> = new Set([
  "AB", "AR", "AG", "BC", "BH", "BN", "BT", "BV", "BR", "BZ", "CS", "CL", "CJ", "CT", "CV", "DB", "DJ", "GL", "GR", "GJ",
  "HR", "HD", "IL", "IS", "IF", "MM", "MH", "MS", "NT", "OT", "PH", "SM", "SJ", "SB", "SV", "TR", "TM", "TL", "VS", "VL",
  "VN", "B"
])

const standard = /^([A-Z]{1,2})(\d{2,3})([A-PR-Z]{3})$/
const temporary = /^([A-Z]{1,2})(0[1-9]\d{1,4})$/
const diplomatic = /^(CD|TC|CO)\d{6}$/

/** The plate as typed, without its separators and in upper case. */
export const compactPlate = (text: string): string => text.replace(/[\s.-]+/g, "").toUpperCase()

/** The plate as stored, or undefined when the text is not a Romanian plate. */
export const normalizePlate = (text: string): string | undefined => {
  const plate = compactPlate(text)
  if (diplomatic.test(plate)) return plate
  const std = standard.exec(plate)
  if (std !== null) {
    const [, county, digits, letters] = std as unknown as [string, string, string, string]
    const digitsFit = digits.length === 2 || county === "B"
    return countyCodes.has(county) && digitsFit && letters[0] !== "I" && letters[0] !== "O" ? plate : undefined
  }
  const temp = temporary.exec(plate)
  return temp !== null && countyCodes.has(temp[1]!) ? plate : undefined
}

export const plateIssue = "must be a Romanian registration plate, e.g. B 123 ABC, CJ 12 ABC or B 012345"
