import { cuiControlDigit } from "@opsplatform/core/shared/identifiers"
import * as fs from "node:fs"

/** The i-th valid Romanian CUI of a generated file (distinct for i below 10^7). */
export const generatedCui = (i: number): string => {
  const body = String(10_000_000 + i)
  return `${body}${cuiControlDigit(body)}`
}

/** Line `i` of a generated contact list: a company with diacritics, a valid CUI, an address and a balance with a decimal comma. */
export const contactLine = (i: number, delimiter = ";"): string =>
  [`Firma Ştefan ${i} SRL`, `RO${generatedCui(i)}`, `J40/${i}/2020`, `Str. Ţepeş Vodă ${i % 300}`, "Bucureşti", `${(i % 9_000) + 1}.234,56`]
    .join(delimiter)

export const contactHeader = (delimiter = ";") => ["Denumire", "CUI", "Nr. Reg. Com.", "Adresa", "Localitate", "Sold"].join(delimiter)

/** Writes a generic contacts CSV of `rows` rows (UTF-8, semicolons) to `file`, streaming; returns its size in bytes. */
export const writeContactsCsv = (file: string, rows: number, delimiter = ";"): number => {
  const fd = fs.openSync(file, "w")
  try {
    let chunk = contactHeader(delimiter) + "\r\n"
    for (let i = 0; i < rows; i++) {
      chunk += contactLine(i, delimiter) + "\r\n"
      if (chunk.length > 1 << 16) {
        fs.writeSync(fd, chunk)
        chunk = ""
      }
    }
    fs.writeSync(fd, chunk)
  } finally {
    fs.closeSync(fd)
  }
  return fs.statSync(file).size
}
