/**
 * Romanian court file numbers ("număr de dosar", decided in docs/decisions.md,
 * "Fleet vehicles and court cases"): `<n>/<court>/<year>`, the file's number
 * at the court that registered it, that court's numeric code and the year of
 * registration, e.g. `1234/3/2026` (file 1234 of Tribunalul București in
 * 2026). A file judged again after a cassation carries one to three `*`
 * (`1234/3/2026*`); an associated file, `/a` and its ordinal, possibly
 * dotted (`1234/3/2026/a1`, `1234/3/2026/a1.2`).
 *
 * Spaces are ignored and the `a` may be written in either case; the number is
 * stored compact with a lower-case `a`. The year is 1990 to 2099.
 */
const pattern = /^([1-9]\d{0,6})\/([1-9]\d{0,3})\/(\d{4})(\*{1,3})?(\/a[1-9]\d{0,2}(?:\.[1-9]\d{0,2})?)?$/

/** The file number as stored, or undefined when the text is not one. */
export const normalizeCaseNumber = (text: string): string | undefined => {
  const compact = text.replace(/\s+/g, "").replace(/\/A(?=\d)/, "/a")
  const m = pattern.exec(compact)
  if (m === null) return undefined
  const year = Number(m[3])
  return year >= 1990 && year <= 2099 ? compact : undefined
}

export const caseNumberIssue = "must be a Romanian court file number <number>/<court code>/<year>, e.g. 1234/3/2026 (optionally * or /a1)"
