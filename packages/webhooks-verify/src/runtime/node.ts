import { createHmac, randomBytes } from "node:crypto"
import type { Runtime } from "../verifier.ts"

const hmac = (key: Uint8Array, prefix: string, message: string | Uint8Array): string =>
  createHmac("sha256", key).update(prefix).update(message).digest("base64")

const hasByteOrderMark = (bytes: Uint8Array): boolean =>
  bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf

/**
 * `node:crypto` (Node, Deno, Bun). The base64 digest is compared as text, so
 * no buffer is allocated for it; Buffer's UTF-8 decoder replaces invalid
 * sequences exactly as `TextDecoder` does, at about half the cost.
 */
export const nodeRuntime: Runtime<Uint8Array> = {
  importKey: (raw) => raw,
  hmac,
  hmacAsync: (key, prefix, message) => {
    try {
      return Promise.resolve(hmac(key, prefix, message))
    } catch (error) {
      return Promise.reject(error)
    }
  },
  randomBytes: (size) => randomBytes(size),
  decodeUtf8: (bytes) => {
    const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    return buffer.toString("utf8", hasByteOrderMark(bytes) ? 3 : 0)
  }
}
