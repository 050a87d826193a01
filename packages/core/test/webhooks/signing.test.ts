import { Cause, Effect, Exit, Layer } from "effect"
import { Mac, SecureRandom } from "effect/crypto"
import { Webhook } from "standardwebhooks"
import { describe, expect, it } from "vitest"
import { SecretBox } from "../../src/webhooks/SecretBox.ts"
import { generateSecret, macKey, secretKeyBytes, signatureHeader } from "../../src/webhooks/signing.ts"
import { Aead } from "effect/crypto"

const crypto = Layer.mergeAll(Mac.layerWebCrypto, Aead.layerWebCrypto).pipe(Layer.provideMerge(SecureRandom.layerWebCrypto))
const run = <A>(effect: Effect.Effect<A, never, Mac.Mac | SecureRandom.SecureRandom | Aead.Aead>) =>
  Effect.runPromise(Effect.provide(effect, crypto))

const encoder = new TextEncoder()

const failureMessage = (exit: Exit.Exit<unknown, unknown>): string =>
  Exit.isFailure(exit) ? String((Cause.squash(exit.cause) as Error).message) : "succeeded"

describe("webhook secrets", () => {
  it("are whsec_ + base64 of 32 random bytes, each new", async () => {
    const [a, b] = await run(Effect.all([generateSecret, generateSecret]))
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(secretKeyBytes(a!)).toHaveLength(32)
    expect(a).not.toBe(b)
  })
})

describe("Standard Webhooks v1 signatures", () => {
  it("match the standardwebhooks library byte for byte, over the raw body", async () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    const id = "evt_0190f5c27a1b7c3d8e4f0123456789ab"
    const timestamp = 1_767_225_600
    const body = `{"id":"${id}","data":{"note":"ünïcode ✓","n":1}}`
    const ours = await run(Effect.flatMap(macKey(secret), (key) => signatureHeader([key], id, timestamp, encoder.encode(body))))
    const theirs = new Webhook(secret).sign(id, new Date(timestamp * 1000), body)
    expect(ours).toBe(theirs)
  })

  it("send one v1 entry per secret, newest first, each verifying with its own secret alone", async () => {
    const [current, previous] = await run(Effect.all([generateSecret, generateSecret]))
    const id = "evt_rotation"
    const timestamp = Math.floor(Date.now() / 1000)
    const body = JSON.stringify({ id, type: "webhook.test" })
    const header = await run(Effect.gen(function*() {
      const keys = [yield* macKey(current!), yield* macKey(previous!)]
      return yield* signatureHeader(keys, id, timestamp, encoder.encode(body))
    }))
    const entries = header.split(" ")
    expect(entries).toHaveLength(2)
    for (const entry of entries) expect(entry).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
    const headers = (signature: string) => ({
      "webhook-id": id,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signature
    })
    expect(() => new Webhook(current!).verify(body, headers(header))).not.toThrow()
    expect(() => new Webhook(previous!).verify(body, headers(header))).not.toThrow()
    expect(() => new Webhook(current!).verify(body, headers(entries[0]!))).not.toThrow()
    expect(() => new Webhook(previous!).verify(body, headers(entries[0]!))).toThrow()
    // A changed body no longer verifies.
    expect(() => new Webhook(current!).verify(body + " ", headers(header))).toThrow()
  })
})

describe("SecretBox", () => {
  const key = Uint8Array.from({ length: 32 }, (_, i) => i)
  const box = SecretBox.layer(key)

  it("seals with AES-256-GCM: the plaintext never appears, and it opens only in its own context", async () => {
    const result = await run(Effect.gen(function*() {
      const b = yield* SecretBox
      const sealed = yield* b.seal("whsec_topsecret", "webhook-secret:a")
      const again = yield* b.seal("whsec_topsecret", "webhook-secret:a")
      const opened = yield* b.open(sealed, "webhook-secret:a")
      const elsewhere = yield* Effect.exit(b.open(sealed, "webhook-secret:b"))
      return { sealed, again, opened, elsewhere }
    }).pipe(Effect.provide(box)))
    expect(result.sealed).toMatch(/^v1\.[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]+$/)
    expect(result.sealed).not.toContain("topsecret")
    // A fresh nonce every time.
    expect(result.again).not.toBe(result.sealed)
    expect(result.opened).toBe("whsec_topsecret")
    expect(result.elsewhere._tag).toBe("Failure")
  })

  it("does not open under another operator key, and says why", async () => {
    const sealed = await run(Effect.flatMap(SecretBox, (b) => b.seal("whsec_x", "ctx")).pipe(Effect.provide(box)))
    const other = SecretBox.layer(Uint8Array.from({ length: 32 }, () => 7))
    const exit = await run(Effect.exit(Effect.flatMap(SecretBox, (b) => b.open(sealed, "ctx"))).pipe(Effect.provide(other)))
    expect(failureMessage(exit)).toContain("OPSPLATFORM_SECRET_KEY")
  })

  it("without a key refuses to seal anything", async () => {
    const exit = await run(
      Effect.exit(Effect.flatMap(SecretBox, (b) => b.seal("whsec_x", "ctx"))).pipe(
        Effect.provide(SecretBox.layerUnavailable("no key configured"))
      )
    )
    expect(failureMessage(exit)).toBe("no key configured")
  })
})
