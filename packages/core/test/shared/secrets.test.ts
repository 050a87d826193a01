import { Effect, Layer } from "effect"
import { Digest, Kdf, SecureRandom } from "effect/crypto"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  constantTimeEqual,
  generateToken,
  hashLowEntropy,
  hashToken,
  LowEntropyHashCost,
  verifyLowEntropy
} from "../../src/shared/secrets.ts"

const crypto = Layer.mergeAll(Digest.layerWebCrypto, Kdf.layerWebCrypto, SecureRandom.layerWebCrypto, Layer.succeed(LowEntropyHashCost, {
  argon2: { memory: 256, passes: 1, parallelism: 1 },
  pbkdf2Iterations: 1000
}))
const run = <A>(e: Effect.Effect<A, never, Digest.Digest | Kdf.Kdf | SecureRandom.SecureRandom>) =>
  Effect.runPromise(Effect.provide(e, crypto))

describe("secrets", () => {
  it("tokens carry their prefix and 256 random bits in base64url", async () => {
    const a = await run(generateToken("svc_key_"))
    const b = await run(generateToken("svc_key_"))
    expect(a).toMatch(/^svc_key_[A-Za-z0-9_-]{43}$/)
    expect(a).not.toBe(b)
  })

  it("hashes a token to lowercase SHA-256 hex", async () => {
    expect(await run(hashToken("abc"))).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  })

  it("verifies a low-entropy secret against its salted hash, and nothing else", async () => {
    const stored = await run(hashLowEntropy("1234"))
    expect(stored).not.toContain("1234")
    const again = await run(hashLowEntropy("1234"))
    expect(again).not.toBe(stored)
    expect(await run(verifyLowEntropy("1234", stored))).toBe(true)
    expect(await run(verifyLowEntropy("1235", stored))).toBe(false)
    expect(await run(verifyLowEntropy("1234", "plain"))).toBe(false)
  })

  it("compares byte strings in constant time with the same answer as plain equality", () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 40 }), fc.uint8Array({ maxLength: 40 }), (a, b) => {
      expect(constantTimeEqual(a, b)).toBe(a.length === b.length && a.every((x, i) => x === b[i]))
      expect(constantTimeEqual(a, Uint8Array.from(a))).toBe(true)
    }))
  })
})
