import { Effect, Stream } from "effect"
import chardet from "chardet"
import { parse } from "csv-parse"
import iconv from "iconv-lite"
import { type CsvRecord, ImportFileError, MAX_IMPORT_BYTES } from "@opsplatform/core/imports/model"
import { normalizeRomanian } from "@opsplatform/core/imports/rules"
import type { CsvFile } from "@opsplatform/core/imports/Imports"

/**
 * Opens a CSV file for an import: reads its first 64 KiB to detect the
 * encoding (BOM, then strict UTF-8, then chardet among Windows-1250 and
 * ISO-8859-2) and the delimiter, then streams the rest through csv-parse
 * (UTF-8 as bytes, the code pages decoded by iconv-lite) — never holding more
 * than a chunk and a batch of rows. Every field comes out with Romanian
 * letters normalised (ş ţ → ș ț), done on the text before it is parsed.
 * Decisions: docs/decisions.md, "Imports".
 */

const SNIFF_BYTES = 64 * 1024

/** Records handed on at a time: the parser's output is collected until a batch is this big. */
const BATCH_RECORDS = 1000

/** Byte pairs of ş Ş ţ Ţ (cedilla) in UTF-8 and the second byte of ș Ș ț Ț (comma below), whose first byte is 0xC8. */
const commaBelow: Readonly<Record<number, number>> = { 0x9e: 0x98, 0x9f: 0x99, 0xa2: 0x9a, 0xa3: 0x9b }

/**
 * ş ţ with a cedilla become ș ț with a comma below in UTF-8 bytes: both are
 * two bytes (C5 9E/9F/A2/A3 → C8 98/99/9A/9B), so the chunk keeps its
 * length; it is copied only when it holds one. 0xC5 is only ever a lead byte.
 */
const commaBelowUtf8 = (chunk: Buffer): Buffer => {
  let out = chunk
  for (let i = chunk.indexOf(0xc5); i !== -1 && i < chunk.length - 1; i = chunk.indexOf(0xc5, i + 2)) {
    const second = commaBelow[chunk[i + 1]!]
    if (second === undefined) continue
    if (out === chunk) out = Buffer.from(chunk)
    out[i] = 0xc8
    out[i + 1] = second
  }
  return out
}

/** Combining marks (U+0300–U+036F) start with byte 0xCC or 0xCD in UTF-8: the text is decomposed and needs NFC. */
const hasCombiningUtf8 = (chunk: Buffer): boolean => chunk.includes(0xcc) || chunk.includes(0xcd)
const combining = /[\u0300-\u036f]/
const cedilla = /[\u015E\u015F\u0162\u0163]/g
const toCommaBelow = (c: string) => c === "\u015F" ? "\u0219" : c === "\u015E" ? "\u0218" : c === "\u0163" ? "\u021B" : "\u021A"

/**
 * The file's bytes as the parser's input, with ş ţ already turned into ș ț:
 * UTF-8 stays bytes (a lead byte cut at a chunk's end waits for the next
 * chunk); the single-byte code pages are decoded by iconv-lite. `decomposed`
 * turns true once the text shows a combining mark: from then on each field
 * is composed (NFC) and normalised on its own.
 */
const textOf = (encoding: string) => {
  let decomposed = false
  if (encoding === "UTF-8") {
    let held: Buffer | undefined
    return {
      get decomposed() {
        return decomposed
      },
      write: (bytes: Uint8Array): Buffer => {
        let chunk = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
        if (held !== undefined) {
          chunk = Buffer.concat([held, chunk])
          held = undefined
        }
        if (chunk.length > 0 && chunk[chunk.length - 1] === 0xc5) {
          held = chunk.subarray(chunk.length - 1)
          chunk = chunk.subarray(0, chunk.length - 1)
        }
        if (!decomposed && hasCombiningUtf8(chunk)) decomposed = true
        return commaBelowUtf8(chunk)
      },
      end: (): Buffer => held ?? Buffer.alloc(0)
    }
  }
  const decoder = iconv.getDecoder(encoding)
  const text = (s: string) => {
    if (!decomposed && combining.test(s)) decomposed = true
    return s.replace(cedilla, toCommaBelow)
  }
  return {
    get decomposed() {
      return decomposed
    },
    write: (bytes: Uint8Array): string => text(decoder.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))),
    end: (): string => text(decoder.end() ?? "")
  }
}

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
      const text = textOf(encoding)
      const parser = parse({ delimiter, bom: true, relax_column_count: true, skip_empty_lines: true })
      // A record is taken as the parser pushes it, so `info.lines` is still its line (cheaper than `info: true`).
      let parsed: Array<CsvRecord> = []
      parser.on("data", (fields: Array<string>) => {
        parsed.push({ line: parser.info.lines, fields: text.decomposed ? fields.map(normalizeRomanian) : fields })
      })
      let failure: unknown = undefined
      parser.on("error", (e) => (failure ??= e))
      const settled = <A>(start: (done: (e?: Error | null) => void) => A) =>
        new Promise<void>((resolve, reject) => {
          start((e) => (e != null ? reject(e) : failure !== undefined ? reject(failure) : resolve()))
        })
      const write = (chunk: Buffer | string) => settled((done) => parser.write(chunk, done))
      const batches = async function*(): AsyncGenerator<readonly [CsvRecord, ...Array<CsvRecord>]> {
        // The "data" listener puts the parser in flowing mode on the next tick; records pushed before that would wait in its buffer.
        await new Promise<void>((resolve) => setImmediate(resolve))
        for await (const chunk of bytes()) {
          await write(text.write(chunk))
          if (parsed.length >= BATCH_RECORDS) {
            const batch = parsed
            parsed = []
            yield batch as unknown as readonly [CsvRecord, ...Array<CsvRecord>]
          }
        }
        await write(text.end())
        await settled((done) => {
          parser.once("end", () => done())
          parser.once("error", done)
          parser.end()
        })
        if (parsed.length > 0) yield parsed as unknown as readonly [CsvRecord, ...Array<CsvRecord>]
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
