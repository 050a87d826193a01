/**
 * Standard base64 (RFC 4648 §4), strict: only the standard alphabet, padding
 * optional but never wrong, unused trailing bits zero. A secret with a stray
 * character is refused instead of silently decoding to another key.
 */

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

const sextets = new Int8Array(256).fill(-1)
for (let i = 0; i < alphabet.length; i++) sextets[alphabet.charCodeAt(i)] = i

const sextetAt = (text: string, index: number): number => {
  const code = text.charCodeAt(index)
  return code < 256 ? sextets[code]! : -1
}

const equalsSign = 61

/** Bytes encoded by `text`, or -1 when it is not canonical base64. */
const decodedLength = (text: string): number => {
  const length = text.length
  let padding = 0
  if (length > 0 && text.charCodeAt(length - 1) === equalsSign) {
    padding = length > 1 && text.charCodeAt(length - 2) === equalsSign ? 2 : 1
  }
  const data = length - padding
  const remainder = data % 4
  if (remainder === 1) return -1
  if (padding > 0 && (length % 4 !== 0 || padding !== 4 - remainder)) return -1
  return (data >> 2) * 3 + (remainder === 0 ? 0 : remainder - 1)
}

/** The bytes of `text`, or undefined when it is not canonical standard base64. */
export const decodeBase64 = (text: string): Uint8Array | undefined => {
  const size = decodedLength(text)
  if (size < 0) return undefined
  const out = new Uint8Array(size)
  let i = 0
  let o = 0
  const whole = size - (size % 3)
  while (o < whole) {
    const a = sextetAt(text, i)
    const b = sextetAt(text, i + 1)
    const c = sextetAt(text, i + 2)
    const d = sextetAt(text, i + 3)
    if ((a | b | c | d) < 0) return undefined
    out[o] = (a << 2) | (b >> 4)
    out[o + 1] = ((b & 15) << 4) | (c >> 2)
    out[o + 2] = ((c & 3) << 6) | d
    i += 4
    o += 3
  }
  const rest = size - whole
  if (rest === 1) {
    const a = sextetAt(text, i)
    const b = sextetAt(text, i + 1)
    if ((a | b) < 0 || (b & 15) !== 0) return undefined
    out[o] = (a << 2) | (b >> 4)
  } else if (rest === 2) {
    const a = sextetAt(text, i)
    const b = sextetAt(text, i + 1)
    const c = sextetAt(text, i + 2)
    if ((a | b | c) < 0 || (c & 3) !== 0) return undefined
    out[o] = (a << 2) | (b >> 4)
    out[o + 1] = ((b & 15) << 4) | (c >> 2)
  }
  return out
}

/** Standard base64 with padding. */
export const encodeBase64 = (bytes: Uint8Array): string => {
  let text = ""
  const whole = bytes.length - (bytes.length % 3)
  let i = 0
  for (; i < whole; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!
    text += alphabet[n >> 18]! + alphabet[(n >> 12) & 63]! + alphabet[(n >> 6) & 63]! + alphabet[n & 63]!
  }
  const rest = bytes.length - whole
  if (rest === 1) {
    const n = bytes[i]! << 16
    text += alphabet[n >> 18]! + alphabet[(n >> 12) & 63]! + "=="
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8)
    text += alphabet[n >> 18]! + alphabet[(n >> 12) & 63]! + alphabet[(n >> 6) & 63]! + "="
  }
  return text
}
