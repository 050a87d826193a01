import * as fc from "fast-check"
import { createHash, createHmac } from "node:crypto"
import { describe, expect, it } from "vitest"
import { decodeBase64, encodeBase64 } from "../src/base64.ts"
import { signatureMatches, signatureOffsets } from "../src/headers.ts"
import { nodeRuntime } from "../src/runtime/node.ts"
import { webRuntime } from "../src/runtime/web.ts"
import { hmacSha256, prepareHmacSha256Key, sha256 } from "../src/sha256.ts"

const bytes = (maxLength: number) => fc.uint8Array({ maxLength })

describe("plain-JavaScript SHA-256 and HMAC", () => {
  it("hashes like node:crypto at every length around the block boundaries", () => {
    for (let length = 0; length <= 200; length++) {
      const data = Uint8Array.from({ length }, (_, i) => (i * 31 + length) & 255)
      expect(Buffer.from(sha256(data)).toString("hex")).toBe(createHash("sha256").update(data).digest("hex"))
    }
  })

  it("computes the same HMAC as node:crypto for any key and any split of the message", () => {
    fc.assert(
      fc.property(bytes(150), fc.array(bytes(150), { maxLength: 5 }), (key, parts) => {
        const expected = createHmac("sha256", key)
        for (const part of parts) expected.update(part)
        expect(Buffer.from(hmacSha256(prepareHmacSha256Key(key), parts)).toString("base64")).toBe(
          expected.digest("base64")
        )
      }),
      { numRuns: 300 }
    )
  })

  it("reuses a prepared key across messages", () => {
    const prepared = prepareHmacSha256Key(new Uint8Array(100).fill(0xaa))
    for (const message of ["a", "bb", "a"]) {
      const data = new TextEncoder().encode(message)
      expect(Buffer.from(hmacSha256(prepared, [data])).toString("hex")).toBe(
        createHmac("sha256", new Uint8Array(100).fill(0xaa)).update(data).digest("hex")
      )
    }
  })
})

describe("strict base64", () => {
  it("encodes like Buffer and decodes its own output", () => {
    fc.assert(
      fc.property(bytes(100), (data) => {
        const text = encodeBase64(data)
        expect(text).toBe(Buffer.from(data).toString("base64"))
        expect(decodeBase64(text)).toEqual(data)
        expect(decodeBase64(text.replace(/=+$/, ""))).toEqual(data)
      })
    )
  })

  it("refuses what is not canonical standard base64", () => {
    const refused = [
      "QQ", // fine without padding...
      "QR==", // ...but unused bits must be zero
      "QQ=",
      "Q===",
      "Q",
      "QUJD=",
      "QU JD",
      "QU\nJD",
      "QUJD-_==",
      "QUJ*",
      "QUJDé",
      "=QUJ"
    ]
    expect(decodeBase64(refused[0]!)).toEqual(new Uint8Array([0x41]))
    for (const text of refused.slice(1)) expect(decodeBase64(text), text).toBeUndefined()
  })
})

describe("signature entries", () => {
  const signature = Buffer.alloc(32, 0xab).toString("base64")

  it("finds every v1 entry of signature length, skipping other versions and lengths", () => {
    const header = `v2,${signature} v1,${signature}  v1,${signature.slice(0, -1)}\tv1a,${signature} v1,${signature}, v1,`
    const offsets = signatureOffsets(header)
    expect(offsets).toEqual([header.indexOf(`v1,${signature}`) + 3, header.lastIndexOf(`v1,${signature},`) + 3])
    for (const offset of offsets) expect(header.slice(offset, offset + 44)).toBe(signature)
    expect(signatureOffsets("")).toEqual([])
    expect(signatureOffsets("v1,")).toEqual([])
  })

  it("matches only the exact signature, wherever the first difference is", () => {
    const header = `v1,${signature}`
    expect(signatureMatches(header, 3, signature)).toBe(true)
    for (let i = 0; i < 44; i++) {
      const changed = signature.slice(0, i) + (signature[i] === "A" ? "B" : "A") + signature.slice(i + 1)
      expect(signatureMatches(header, 3, changed), `difference at ${i}`).toBe(false)
    }
    expect(signatureMatches(header, 3, signature.slice(0, 43))).toBe(false)
  })
})

describe("UTF-8 decoding of a body", () => {
  it("gives the same text on Node and on the Web runtime for any bytes", () => {
    const bom = [0xef, 0xbb, 0xbf]
    fc.assert(
      fc.property(fc.boolean(), bytes(40), (withBom, data) => {
        const input = Uint8Array.from(withBom ? [...bom, ...data] : data)
        expect(nodeRuntime.decodeUtf8(input)).toBe(webRuntime.decodeUtf8(input))
      }),
      { numRuns: 2000 }
    )
  })

  it("drops a byte order mark, replaces invalid sequences, and reads only the view's bytes", () => {
    for (const runtime of [nodeRuntime, webRuntime]) {
      expect(runtime.decodeUtf8(Uint8Array.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]))).toBe("{}")
      expect(runtime.decodeUtf8(Uint8Array.from([0x63, 0xe9, 0xff]))).toBe("c\uFFFD\uFFFD")
      expect(runtime.decodeUtf8(Uint8Array.from([0x20, 0x61, 0x62, 0x20]).subarray(1, 3))).toBe("ab")
      expect(runtime.decodeUtf8(Buffer.from([0xef, 0xbb, 0xbf, 0x5b, 0x5d]))).toBe("[]")
      expect(runtime.decodeUtf8(Buffer.from(" ab ").subarray(1, 3))).toBe("ab")
    }
  })
})
