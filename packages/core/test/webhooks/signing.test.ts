import { Cause, Effect, Exit, Layer } from "effect"
import { Aead, Mac, SecureRandom, Signature } from "effect/crypto"
import { Webhook } from "standardwebhooks"
import nacl from "tweetnacl"
import { describe, expect, it } from "vitest"
import { SecretBox } from "../../src/webhooks/SecretBox.ts"
import {
  generateKeyPair,
  generateSecret,
  macKey,
  secretKeyBytes,
  signatureHeader,
  signingKey
} from "../../src/webhooks/signing.ts"

const crypto = Layer.mergeAll(Mac.layerWebCrypto, Aead.layerWebCrypto, Signature.layerWebCrypto).pipe(
  Layer.provideMerge(SecureRandom.layerWebCrypto)
)
const run = <A>(effect: Effect.Effect<A, never, Mac.Mac | SecureRandom.SecureRandom | Aead.Aead | Signature.Signature>) =>
  Effect.runPromise(Effect.provide(effect, crypto))

const v1 = (secret: string) => Effect.map(macKey(secret), (key) => ({ scheme: "v1" as const, key }))

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
    const ours = await run(Effect.flatMap(v1(secret), (key) => signatureHeader([key], id, timestamp, encoder.encode(body))))
    const theirs = new Webhook(secret).sign(id, new Date(timestamp * 1000), body)
    expect(ours).toBe(theirs)
  })

  it("send one v1 entry per secret, newest first, each verifying with its own secret alone", async () => {
    const [current, previous] = await run(Effect.all([generateSecret, generateSecret]))
    const id = "evt_rotation"
    const timestamp = Math.floor(Date.now() / 1000)
    const body = JSON.stringify({ id, type: "webhook.test" })
    const header = await run(Effect.gen(function*() {
      const keys = [yield* v1(current!), yield* v1(previous!)]
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

const bytesOf = (text: string, prefix: string) => Buffer.from(text.slice(prefix.length), "base64")

describe("Standard Webhooks v1a keys", () => {
  it("are whsk_ + base64 of the seed and the public key, and whpk_ + base64 of the public key, as TweetNaCl derives them", async () => {
    const [a, b] = await run(Effect.all([generateKeyPair, generateKeyPair]))
    expect(a!.privateKey).toMatch(/^whsk_[A-Za-z0-9+/]{86}==$/)
    expect(a!.publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/)
    expect(a!.privateKey).not.toBe(b!.privateKey)
    const secretKey = bytesOf(a!.privateKey, "whsk_")
    const derived = nacl.sign.keyPair.fromSeed(secretKey.subarray(0, 32))
    expect(Buffer.from(derived.secretKey)).toEqual(secretKey)
    expect(Buffer.from(derived.publicKey)).toEqual(bytesOf(a!.publicKey, "whpk_"))
  })
})

describe("Standard Webhooks v1a signatures", () => {
  const id = "evt_0190f5c27a1b7c3d8e4f0123456789ab"
  const timestamp = 1_767_225_600
  const body = `{"id":"${id}","data":{"note":"ünïcode ✓","n":1}}`
  const content = encoder.encode(`${id}.${timestamp}.${body}`)

  it("are the Ed25519 signature TweetNaCl makes of {id}.{timestamp}.{body} with the same key, byte for byte", async () => {
    const pair = nacl.sign.keyPair.fromSeed(Uint8Array.from({ length: 32 }, (_, i) => 255 - i))
    const whsk = `whsk_${Buffer.from(pair.secretKey).toString("base64")}`
    const header = await run(Effect.flatMap(signingKey("v1a", whsk), (key) => signatureHeader([key], id, timestamp, encoder.encode(body))))
    expect(header).toBe(`v1a,${Buffer.from(nacl.sign.detached(content, pair.secretKey)).toString("base64")}`)
  })

  it("sit beside v1 entries during a change of scheme, each checkable by its own kind of receiver only", async () => {
    const [pair, secret] = await run(Effect.all([generateKeyPair, generateSecret]))
    const header = await run(Effect.gen(function*() {
      const keys = [yield* signingKey("v1a", pair!.privateKey), yield* signingKey("v1", secret!)]
      return yield* signatureHeader(keys, id, timestamp, encoder.encode(body))
    }))
    const [ed, hmac] = header.split(" ")
    expect(ed).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/)
    expect(hmac).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/)
    const publicKey = bytesOf(pair!.publicKey, "whpk_")
    const signature = Buffer.from(ed!.slice(4), "base64")
    expect(nacl.sign.detached.verify(content, signature, publicKey)).toBe(true)
    const flipped = Buffer.from(signature)
    flipped[10]! ^= 1
    expect(nacl.sign.detached.verify(content, flipped, publicKey)).toBe(false)
    expect(nacl.sign.detached.verify(encoder.encode(`${id}.${timestamp + 1}.${body}`), signature, publicKey)).toBe(false)
    // The v1 entry is the same HMAC as alone; a v1 receiver ignores the v1a entry.
    const headers = { "webhook-id": id, "webhook-timestamp": String(Math.floor(Date.now() / 1000)), "webhook-signature": "" }
    const now = Number(headers["webhook-timestamp"])
    const fresh = await run(Effect.gen(function*() {
      const keys = [yield* signingKey("v1a", pair!.privateKey), yield* signingKey("v1", secret!)]
      return yield* signatureHeader(keys, id, now, encoder.encode(body))
    }))
    expect(() => new Webhook(secret!).verify(body, { ...headers, "webhook-signature": fresh })).not.toThrow()
    expect(() => new Webhook(secret!).verify(body, { ...headers, "webhook-signature": fresh.split(" ")[0]! })).toThrow()
  })

  it("refuse a private key of the wrong form", async () => {
    const exit = (text: string) => Effect.runPromise(Effect.exit(signingKey("v1a", text)))
    expect(failureMessage(await exit("whsec_AAAA"))).toContain("whsk_")
    expect(failureMessage(await exit(`whsk_${Buffer.alloc(32).toString("base64")}`))).toContain("64 bytes")
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
