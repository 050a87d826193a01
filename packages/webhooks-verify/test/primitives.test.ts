import * as fc from "fast-check"
import { createHash, createHmac } from "node:crypto"
import { describe, expect, it } from "vitest"
import { decodeBase64, decodeBase64Into, encodeBase64 } from "../src/base64.ts"
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

  it("decodes a signature out of the middle of a header, of exactly the expected size", () => {
    const signature = new Uint8Array(32).map((_, i) => i * 7)
    const header = `v1,${encodeBase64(signature)} v1,x`
    const out = new Uint8Array(32)
    expect(decodeBase64Into(header, 3, 47, out)).toBe(true)
    expect(out).toEqual(signature)
    // Padding is optional; a missing character is not.
    expect(decodeBase64Into(header, 3, 46, out)).toBe(true)
    expect(decodeBase64Into(header, 3, 45, out)).toBe(false)
    expect(decodeBase64Into(header, 3, 47, new Uint8Array(31))).toBe(false)
  })
})
