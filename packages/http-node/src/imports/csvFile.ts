import { Effect, Stream } from "effect"
import chardet from "chardet"
import iconv from "iconv-lite"
import { Worker } from "node:worker_threads"
import { type CsvRecord, ImportFileError, MAX_IMPORT_BYTES, MAX_RECORD_CHARS } from "@opsplatform/core/imports/model"
import { normalizeRomanian } from "@opsplatform/core/imports/rules"
import type { CsvFile } from "@opsplatform/core/imports/Imports"
import type { ParseReply, ParseRequest } from "./csvWorker.ts"

/**
 * Opens a CSV file for an import: reads its first 64 KiB to detect the
 * encoding (BOM, then strict UTF-8, then chardet among Windows-1250 and
 * ISO-8859-2) and the delimiter, then streams the rest to csv-parse in a
 * thread of its own (`csvWorker.ts`; UTF-8 as bytes, the code pages decoded
 * by iconv-lite) — never holding more than a few chunks and their rows.
 * Every field comes out with Romanian letters normalised (ş ţ → ș ț), done
 * on the text before it is parsed.
 * Decisions: docs/decisions.md, "Imports".
 */

const SNIFF_BYTES = 64 * 1024

/** Chunks sent to the parser thread before its answer to the first is taken: it parses ahead while rows are checked. */
const AHEAD = 4

/** The parser thread's module: the compiled one beside this file, or the TypeScript source when run from source. */
const workerUrl = new URL(import.meta.url.endsWith(".ts") ? "./csvWorker.ts" : "./csvWorker.js", import.meta.url)

/**
 * A parser thread started ahead of the next import, so an upload does not
 * wait for one to load. It is unreferenced: it never keeps a process alive.
 * Each thread reads one file and is ended; taking the spare starts the next.
 */
let spare: Worker | undefined
const parserThread = (): Worker => {
  const worker = spare ?? new Worker(workerUrl)
  spare = new Worker(workerUrl)
  spare.unref()
  // A spare that fails to start is dropped; the next import starts its own.
  const started = spare
  started.once("error", () => {
    if (spare === started) spare = undefined
  })
  worker.ref()
  return worker
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
      // Parsing runs in its own thread, a few chunks ahead of the rows being checked (decided: docs/decisions.md, "Imports").
      const worker = parserThread()
      worker.postMessage({ start: { encoding, delimiter } } satisfies ParseRequest)
      const inbox: Array<ParseReply | Error> = []
      let wake: (() => void) | undefined
      const deliver = (m: ParseReply | Error) => {
        inbox.push(m)
        wake?.()
      }
      worker.on("message", deliver)
      worker.on("error", deliver)
      worker.on("exit", (code) => deliver(new Error(`the parser stopped (exit code ${code})`)))
      const receive = async (): Promise<ParseReply> => {
        while (inbox.length === 0) await new Promise<void>((resolve) => (wake = resolve))
        wake = undefined
        const m = inbox.shift()!
        if (m instanceof Error) throw m
        if (m.errorCode === "CSV_MAX_RECORD_SIZE") {
          throw fileError(
            "record_too_large",
            `Line ${m.errorLine ?? "?"} holds more than ${MAX_RECORD_CHARS} characters: a record (or a quoted cell left open) that long is not ` +
              `a row of a CSV export`
          )
        }
        if (m.error !== undefined) throw new Error(m.error)
        return m
      }
      const batches = async function*(): AsyncGenerator<readonly [CsvRecord, ...Array<CsvRecord>]> {
        const source = bytes()[Symbol.asyncIterator]()
        let sent = 0
        let ended = false
        try {
          while (true) {
            while (!ended && sent < AHEAD) {
              const next = await source.next()
              if (next.done === true) {
                ended = true
                worker.postMessage({ end: true } satisfies ParseRequest)
              } else worker.postMessage({ chunk: next.value } satisfies ParseRequest)
              sent++
            }
            const reply = await receive()
            sent--
            if (reply.fields.length > 0) {
              const records = reply.fields.map((fields, i): CsvRecord => ({
                line: reply.lines[i]!,
                fields: reply.decomposed ? fields.map(normalizeRomanian) : fields
              }))
              yield records as unknown as readonly [CsvRecord, ...Array<CsvRecord>]
            }
            if (reply.done === true) return
          }
        } finally {
          worker.removeAllListeners("exit")
          void worker.terminate()
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
