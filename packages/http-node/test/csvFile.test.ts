import { Effect, Stream } from "effect"
import { parse } from "csv-parse/sync"
import iconv from "iconv-lite"
import { describe, expect, it } from "vitest"
import type { CsvRecord } from "@opsplatform/core/imports/model"
import { openCsv } from "../src/imports/csvFile.ts"

/** The file's bytes in chunks of the given sizes (cycled), as an upload or a read stream delivers them. */
async function* chunked(bytes: Uint8Array, sizes: ReadonlyArray<number>) {
  let at = 0
  for (let i = 0; at < bytes.length; i++) {
    const size = sizes[i % sizes.length]!
    yield bytes.slice(at, at + size)
    at += size
  }
}

const read = (bytes: Uint8Array, sizes: ReadonlyArray<number> = [bytes.length]) =>
  Effect.runPromise(Effect.flatMap(openCsv(chunked(bytes, sizes)), (file) =>
    Effect.map(Stream.runCollect(file.records), (records) => ({
      encoding: file.encoding,
      delimiter: file.delimiter,
      records: Array.from(records) as Array<CsvRecord>
    }))))

/** What csv-parse itself reports for the text: each record with the line `info: true` gives it. */
const reference = (text: string, delimiter: string) =>
  (parse(text, { delimiter, bom: true, relax_column_count: true, skip_empty_lines: true, info: true }) as Array<{
    record: Array<string>
    info: { lines: number }
  }>).map((r) => ({ line: r.info.lines, fields: r.record }))

// Quoted fields across lines, empty lines, an escaped quote and a last line without its end.
const tricky = [
  "Denumire;CUI;Adresa",
  "Alfa SRL;RO123;\"Str. Lungă 1\nBloc A\"",
  "",
  "Beta SA;RO456;\"x;y\"",
  "\"Gamma\n\nSRL\";RO789;Iași",
  "",
  "",
  "Delta;;\"He said \"\"hi\"\"\""
].join("\n")

describe("openCsv", () => {
  it("gives each record the line csv-parse's own `info` reports, whatever the chunking", async () => {
    const bytes = Buffer.from(tricky, "utf8")
    const expected = reference(tricky, ";")
    expect(expected.map((r) => r.line)).toEqual([1, 3, 5, 8, 11])
    for (const sizes of [[bytes.length], [1], [3, 7], [16, 1, 5]]) {
      const { delimiter, records } = await read(bytes, sizes)
      expect(delimiter).toBe(";")
      expect(records).toEqual(expected)
    }
  })

  it("turns ş ţ Ş Ţ with a cedilla into ș ț Ș Ț with a comma below in every encoding, even a UTF-8 letter cut between chunks", async () => {
    const text = "Nume,Localitate\nŞtefan Ţurcanu,Bucureşti\nţesătorie ş.a.,Târgu Jiu\n"
    const expected = [["Nume", "Localitate"], ["Ștefan Țurcanu", "București"], ["țesătorie ș.a.", "Târgu Jiu"]]
    for (const encoding of ["utf8", "windows-1250", "iso-8859-2"]) {
      const bytes = iconv.encode(text, encoding)
      for (const sizes of [[bytes.length], [1], [2, 3], [5]]) {
        const file = await read(bytes, sizes)
        expect(file.records.map((r) => r.fields)).toEqual(expected)
      }
    }
    // A BOM is dropped, and so is nothing else.
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, "utf8")])
    expect((await read(withBom, [2])).records.map((r) => r.fields)).toEqual(expected)
  })

  it("composes decomposed letters (s + combining cedilla → ș, a + combining breve → ă) once the text shows a combining mark", async () => {
    const decomposed = "Nume;Oraș\nplain;ascii\nS\u0327tefan;Ba\u0306iles\u0327ti\n"
    const { records } = await read(Buffer.from(decomposed, "utf8"), [4])
    expect(records.map((r) => r.fields)).toEqual([["Nume", "Oraș"], ["plain", "ascii"], ["Ștefan", "Băilești"]])
  })

  it("reads a file bigger than a batch in order, nothing lost or repeated", async () => {
    const rows = Array.from({ length: 2500 }, (_, i) => `Firma ${i};RO${1000 + i};Str. Şcolii ${i}`)
    const text = ["Denumire;CUI;Adresa", ...rows].join("\r\n")
    const { records } = await read(Buffer.from(text, "utf8"), [4096, 333])
    expect(records.length).toBe(2501)
    expect(records.map((r) => r.line)).toEqual(Array.from({ length: 2501 }, (_, i) => i + 1))
    expect(records[2500]!.fields).toEqual(["Firma 2499", "RO3499", "Str. Școlii 2499"])
  })

  it("fails a file whose quote never closes with a clear error", async () => {
    const failure = await Effect.runPromise(Effect.flip(Effect.flatMap(openCsv(chunked(Buffer.from("a;b\n\"open;x\n"), [3])), (file) =>
      Stream.runDrain(file.records))))
    expect(failure).toMatchObject({ code: "malformed_csv" })
    expect(failure.message).toMatch(/^The file is not valid CSV: /)
  })
})
