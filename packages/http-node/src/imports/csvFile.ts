import { Effect, Stream } from "effect"
import { Readable } from "node:stream"
import chardet from "chardet"
import { parse } from "csv-parse"
import iconv from "iconv-lite"
import { type CsvRecord, ImportFileError, MAX_IMPORT_BYTES } from "@opsplatform/core/imports/model"
import { normalizeRomanian } from "@opsplatform/core/imports/rules"
import type { CsvFile } from "@opsplatform/core/imports/Imports"

/**
 * Opens a CSV file for an import: reads its first 64 KiB to detect the
 * encoding (BOM, then strict UTF-8, then chardet among Windows-1250 and
 * ISO-8859-2) and the delimiter, then streams the rest through iconv-lite and
 * csv-parse — never holding more than a chunk and a batch of rows. Every
 * field comes out with Romanian letters normalised (ş ţ → ș ț).
 * Decisions: docs/decisions.md, "Imports".
 */

const SNIFF_BYTES = 64 * 1024

const fileError = (code: string, message: string) => new ImportFileError({ code, message })

/** The encodings an import reads; anything else is refused as not a Romanian text export. */
const detectEncoding = (head: Uint8Array): string | undefined => {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return "UTF-8"
  try {
    // A multi-byte character cut at the sniff window's end is not an error (stream: true).
    new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: true })
    return "UTF-8"
  } catch {
    // not UTF-8: one of the single-byte Central European code pages
  }
  const candidates = chardet.analyse(head).map((m) => m.name.toLowerCase())
  const named = candidates.find((n) => n === "windows-1250" || n === "iso-8859-2")
  if (named !== undefined) return named === "windows-1250" ? "windows-1250" : "ISO-8859-2"
  // Bytes 0x80–0x9F are letters in Windows-1250 and control codes in ISO-8859-2.
  return head.some((b) => b >= 0x80 && b <= 0x9f) ? "windows-1250" : "ISO-8859-2"
}

/** Control bytes text never has (NUL and the C0 codes other than tab, CR, LF, FF): the mark of a binary file. */
const looksBinary = (head: Uint8Array): boolean => {
  let control = 0
  for (const b of head) {
    if (b === 0) return true
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c) control++
  }
  return control > head.length / 100
}

/** The delimiter of the header line (outside quotes): the most frequent of `;` `,` and tab; `,` when none. */
export const sniffDelimiter = (text: string): string => {
  const counts = new Map<string, number>([[";", 0], [",", 0], ["\t", 0]])
  let quoted = false
  for (const c of text) {
    if (c === "\"") quoted = !quoted
    else if (!quoted && (c === "\n" || c === "\r")) break
    else if (!quoted && counts.has(c)) counts.set(c, counts.get(c)! + 1)
  }
  let best = ","
  let most = 0
  for (const [d, n] of counts) {
    if (n > most) {
      best = d
      most = n
    }
  }
  return best
}

/** Reads up to `SNIFF_BYTES` from the source; the rest of the source stays unread. */
const readHead = async (iterator: AsyncIterator<Uint8Array>, limit: number) => {
  const chunks: Array<Uint8Array> = []
  let size = 0
  let done = false
  while (size < SNIFF_BYTES) {
    const next = await iterator.next()
    if (next.done === true) {
      done = true
      break
    }
    chunks.push(next.value)
    size += next.value.length
    if (size > limit) throw fileError("too_large", `The file exceeds ${limit} bytes`)
  }
  return { head: Buffer.concat(chunks), done }
}

/** Opens `source` (the file's bytes) as a CSV file; a file that is empty, binary or too large is an ImportFileError. */
export const openCsv = (
  source: AsyncIterable<Uint8Array>,
  options: { readonly maxBytes?: number } = {}
): Effect.Effect<CsvFile, ImportFileError> =>
  Effect.tryPromise({
    try: async () => {
      const limit = options.maxBytes ?? MAX_IMPORT_BYTES
      const iterator = source[Symbol.asyncIterator]()
      const { done, head } = await readHead(iterator, limit)
      if (head.length === 0 || head.every((b) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09)) {
        throw fileError("empty_file", "The file is empty")
      }
      if (looksBinary(head)) {
        throw fileError("binary_file", "The file is not text: it holds binary data (is it a spreadsheet? export it as CSV)")
      }
      const encoding = detectEncoding(head)!
      const delimiter = sniffDelimiter(iconv.decode(head.subarray(0, 4096), encoding).replace(/^\uFEFF/, ""))
      let total = head.length
      const bytes = async function*() {
        yield head
        if (done) return
        while (true) {
          const next = await iterator.next()
          if (next.done === true) return
          total += next.value.length
          if (total > limit) throw fileError("too_large", `The file exceeds ${limit} bytes`)
          yield next.value
        }
      }
      const parser = parse({
        delimiter,
        bom: true,
        relax_column_count: true,
        skip_empty_lines: true,
        info: true
      })
      const input = Readable.from(bytes())
      // pipe() does not pass errors on: a source that fails (over the limit, unreadable) fails the parse.
      input.on("error", (e) => parser.destroy(e))
      const decoded = input.pipe(iconv.decodeStream(encoding))
      decoded.on("error", (e) => parser.destroy(e))
      decoded.pipe(parser)
      // Records are taken from the parser a buffer at a time (not one promise per record), then flattened.
      let ended = false
      let failure: unknown = undefined
      parser.on("end", () => (ended = true))
      parser.on("error", (e) => (failure = e))
      const batches = async function*(): AsyncGenerator<readonly [CsvRecord, ...Array<CsvRecord>]> {
        while (true) {
          const batch: Array<CsvRecord> = []
          let item: { readonly record: Array<string>; readonly info: { readonly lines: number } } | null
          while ((item = parser.read()) !== null) batch.push({ line: item.info.lines, fields: item.record.map(normalizeRomanian) })
          if (batch.length > 0) yield batch as unknown as readonly [CsvRecord, ...Array<CsvRecord>]
          if (failure !== undefined) throw failure
          if (ended) return
          await new Promise<void>((resolve) => {
            const done = () => {
              parser.off("readable", done)
              parser.off("end", done)
              parser.off("error", done)
              resolve()
            }
            parser.on("readable", done)
            parser.on("end", done)
            parser.on("error", done)
          })
        }
      }
      return {
        encoding,
        delimiter,
        records: Stream.fromAsyncIterable(batches(), (e) =>
          e instanceof ImportFileError
            ? e
            : fileError("malformed_csv", `The file is not valid CSV: ${e instanceof Error ? e.message : String(e)}`)).pipe(
            Stream.flattenArray
          )
      } satisfies CsvFile
    },
    catch: (e) => e instanceof ImportFileError ? e : fileError("unreadable", `The file could not be read: ${String(e)}`)
  })
