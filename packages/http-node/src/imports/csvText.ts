import iconv from "iconv-lite"

/**
 * The text side of reading an import file, shared by the parser thread
 * (`csvWorker.ts`): the bytes as csv-parse's input with ş ţ already written
 * as ș ț. Only erasable TypeScript here: the worker runs from source too.
 */

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
// The same letters core's `normalizeRomanian` rewrites per field: the parser thread loads no core module, so it
// keeps its own copy of the four-letter map; the two must change together.
const cedilla = /[\u015E\u015F\u0162\u0163]/g
const toCommaBelow = (c: string) => c === "\u015F" ? "\u0219" : c === "\u015E" ? "\u0218" : c === "\u0163" ? "\u021B" : "\u021A"

/**
 * The file's bytes as the parser's input, with ş ţ already turned into ș ț:
 * UTF-8 stays bytes (a lead byte cut at a chunk's end waits for the next
 * chunk); the single-byte code pages are decoded by iconv-lite. `decomposed`
 * turns true once the text shows a combining mark: from then on each field
 * is composed (NFC) and normalised on its own.
 */
export const textOf = (encoding: string) => {
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
