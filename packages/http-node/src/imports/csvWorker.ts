import { parse } from "csv-parse"
import { parentPort } from "node:worker_threads"
import { MAX_RECORD_CHARS } from "@opsplatform/core/imports/model"
import { textOf } from "./csvText.ts"

/**
 * The parser thread of an import (see `openCsv`): told the file's encoding
 * and delimiter first, then takes its chunks in order, turns them into text (`textOf`) and parses them with csv-parse,
 * answering each chunk with the records it completed: their lines and fields.
 * The chunk `{ end: true }` is answered `{ done: true }` after the last
 * records; a malformed file is answered `{ error }` and the thread stops
 * reading. Decided: docs/decisions.md, "Imports".
 */

export interface ParseRequest {
  /** First, once: how to read the file. */
  readonly start?: { readonly encoding: string; readonly delimiter: string }
  readonly chunk?: Uint8Array
  readonly end?: true
}
export interface ParseReply {
  readonly lines: Array<number>
  readonly fields: Array<Array<string>>
  /** The text showed a combining mark: its fields still need composing (NFC). */
  readonly decomposed: boolean
  readonly done?: true
  readonly error?: string
  /** csv-parse's code for the error (`CSV_MAX_RECORD_SIZE`…), and the line it stopped at. */
  readonly errorCode?: string
  readonly errorLine?: number
}

const port = parentPort!

/** Sets up the parse of one file: the thread may have been started before the file's encoding and delimiter were known. */
const start = (encoding: string, delimiter: string) => {
  const text = textOf(encoding)
  // A record past MAX_RECORD_CHARS stops the parse: no cell, header or otherwise, is buffered without bound.
  const parser = parse({ delimiter, bom: true, relax_column_count: true, skip_empty_lines: true, max_record_size: MAX_RECORD_CHARS })
  let lines: Array<number> = []
  let fields: Array<Array<string>> = []
  // A record is taken as the parser pushes it, so `info.lines` is still its line (cheaper than `info: true`).
  parser.on("data", (record: Array<string>) => {
    lines.push(parser.info.lines)
    fields.push(record)
  })
  let failed = false
  const reply = (extra: Pick<ParseReply, "done" | "error" | "errorCode" | "errorLine"> = {}) => {
    const message: ParseReply = { lines, fields, decomposed: text.decomposed, ...extra }
    lines = []
    fields = []
    port.postMessage(message)
  }
  const fail = (e: unknown) => {
    if (failed) return
    failed = true
    const code = (e as { readonly code?: unknown }).code
    const line = (e as { readonly lines?: unknown }).lines
    reply({
      error: e instanceof Error ? e.message : String(e),
      ...(typeof code === "string" ? { errorCode: code } : {}),
      ...(typeof line === "number" ? { errorLine: line } : {})
    })
  }
  parser.on("error", fail)
  parser.on("end", () => {
    if (!failed) reply({ done: true })
  })
  return (request: ParseRequest) => {
    if (failed) return
    if (request.chunk !== undefined) {
      parser.write(text.write(request.chunk), (e) => (e == null ? reply() : fail(e)))
    } else if (request.end === true) {
      parser.write(text.end())
      parser.end()
    }
  }
}

let handle: ((request: ParseRequest) => void) | undefined
port.on("message", (request: ParseRequest) => {
  if (request.start !== undefined) handle = start(request.start.encoding, request.start.delimiter)
  else handle?.(request)
})
