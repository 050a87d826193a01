import nacl from "tweetnacl"
import { afterEach, describe, expect, it, vi } from "vitest"
import * as Portable from "../src/index.ts"
import {
  body,
  caught,
  ed25519Headers,
  edPair,
  entries,
  event,
  eventId,
  key,
  now,
  nowSeconds,
  otherEdPair,
  otherPublicKey,
  privateKey,
  publicKey,
  referenceEd25519,
  secret,
  signedHeaders
} from "./support.ts"

/**
 * `v1a` (Ed25519) against TweetNaCl, an implementation independent of the
 * package's (node:crypto on Node, Web Crypto elsewhere): each accepts what
 * the other signs, and the package refuses what it must. Both entry points
 * run the async path; the Node entry runs the sync one too.
 */

const fromBase64 = (text: string) => new Uint8Array(Buffer.from(text, "base64"))

describe.each(entries)("%s entry", (name, api) => {
  const sync = name === "node"
  const verifier = api.createVerifier(publicKey, { now })
  /** Every verifying method this entry can run with a public key. */
  const verifyAll = async (payload: string | Uint8Array, headers: Record<string, string>) => {
    const results = [await verifier.verifyAsync(payload, headers), await verifier.verifySignatureAsync(payload, headers)]
    if (sync) results.push(verifier.verify(payload, headers), verifier.verifySignature(payload, headers))
    return results
  }
  const refusals = async (payload: string | Uint8Array, headers: Record<string, string>, using = verifier) => {
    const codes = [(await caught(() => using.verifyAsync(payload, headers))).code]
    if (sync) codes.push((await caught(() => using.verify(payload, headers))).code)
    return codes
  }

  it("accepts what TweetNaCl signs, by every method, and returns the event", async () => {
    for (const result of await verifyAll(body, ed25519Headers())) {
      expect(result).toMatchObject({ id: eventId, timestamp: nowSeconds })
    }
    expect((await verifier.verifyAsync(body, ed25519Headers())).event).toEqual(event)
    const request = new Request("https://receiver.example/hooks", { method: "POST", body, headers: ed25519Headers() })
    expect((await verifier.verifyRequest(request)).event).toEqual(event)
  })

  it("refuses a flipped bit in the signature, the id, the timestamp or the body", async () => {
    const headers = ed25519Headers()
    const signature = fromBase64(headers["webhook-signature"].slice(4))
    signature[63]! ^= 0x01
    const flipped = { ...headers, "webhook-signature": `v1a,${Buffer.from(signature).toString("base64")}` }
    expect(await refusals(body, flipped)).toEqual(sync ? ["no_matching_signature", "no_matching_signature"] : ["no_matching_signature"])
    const bytes = Buffer.from(body)
    bytes[20]! ^= 0x01
    for (const [payload, h] of [
      [bytes, headers],
      [body, { ...headers, "webhook-id": `${eventId}x` }],
      [body, { ...headers, "webhook-timestamp": String(nowSeconds + 1) }]
    ] as const) {
      for (const code of await refusals(payload, h)) expect(code).toBe("no_matching_signature")
    }
  })

  it("refuses a signature made with another key, naming what it checked", async () => {
    const error = await caught(() => verifier.verifyAsync(body, ed25519Headers({ secretKeys: [otherEdPair.secretKey] })))
    expect(error.code).toBe("no_matching_signature")
    expect(error.message).toContain("1 v1a entry checked against 1 public key")
    expect(error.message).toContain("public-keys")
  })

  it("never checks a v1a entry against a v1 secret, nor a v1 entry against a public key", async () => {
    const v1a = ed25519Headers()
    const bySecret = await caught(() => api.createVerifier(secret, { now }).verifyAsync(body, v1a))
    expect(bySecret.code).toBe("no_matching_signature")
    expect(bySecret.message).toMatch(/only v1a \(Ed25519\) entries, which a whsec_ secret cannot check/)
    const v1 = signedHeaders()
    const byPublicKey = await caught(() => verifier.verifyAsync(body, v1))
    expect(byPublicKey.code).toBe("no_matching_signature")
    expect(byPublicKey.message).toMatch(/only v1 \(HMAC\) entries, which a whpk_ public key cannot check/)
    // Relabelled as v1, an Ed25519 signature is no HMAC of any secret.
    const relabelled = { ...v1a, "webhook-signature": v1a["webhook-signature"].replace(/^v1a,/, "v1,") }
    expect((await caught(() => api.createVerifier(secret, { now }).verifyAsync(body, relabelled))).code).toBe("no_matching_signature")
  })

  it("holds the timestamp tolerance as for v1: 300 s passes, 301 s fails either way", async () => {
    for (const offset of [-300, 300]) {
      expect((await verifier.verifyAsync(body, ed25519Headers({ timestamp: nowSeconds + offset }))).id).toBe(eventId)
    }
    expect((await caught(() => verifier.verifyAsync(body, ed25519Headers({ timestamp: nowSeconds - 301 })))).code).toBe("timestamp_too_old")
    expect((await caught(() => verifier.verifyAsync(body, ed25519Headers({ timestamp: nowSeconds + 301 })))).code).toBe("timestamp_too_new")
  })

  it("tries every entry: a rotation's keys, other versions and malformed entries beside the one that matches", async () => {
    const both = ed25519Headers({ secretKeys: [otherEdPair.secretKey, edPair.secretKey] })
    for (const result of await verifyAll(body, both)) expect(result.id).toBe(eventId)
    // The receiver rotating its own trust: either key alone, or both.
    expect((await api.createVerifier([otherPublicKey, publicKey], { now }).verifyAsync(body, ed25519Headers())).id).toBe(eventId)
    expect((await api.createVerifier(otherPublicKey, { now }).verifyAsync(body, both)).id).toBe(eventId)
    const good = ed25519Headers()["webhook-signature"]
    const noisy = `v2,abc v1a,${"A".repeat(87)} v1a,not*base64${"A".repeat(76)} v1,${"A".repeat(43)}= ${good},`
    for (const result of await verifyAll(body, { ...ed25519Headers(), "webhook-signature": noisy })) expect(result.id).toBe(eventId)
    const unusable = await caught(() => verifier.verifyAsync(body, { ...ed25519Headers(), "webhook-signature": `v1a,${"A".repeat(86)}==`.slice(0, 60) }))
    expect(unusable.message).toMatch(/its 1 v1a entry is not the padded base64 of a 64-byte Ed25519 signature/)
  })

  it("checks the raw body: bytes that are not UTF-8 verify, re-serialized JSON does not", async () => {
    const bytes = Buffer.concat([Buffer.from(body.slice(0, -2)), Buffer.from(`,"n":"`), Buffer.from([0xe9, 0xff]), Buffer.from(`"}}`)])
    const headers = ed25519Headers({ payload: bytes })
    for (const result of await verifyAll(bytes, headers)) expect(result.id).toBe(eventId)
    const pretty = JSON.stringify(JSON.parse(body), null, 2)
    expect((await caught(() => verifier.verifyAsync(pretty, ed25519Headers())))).toMatchObject({ code: "no_matching_signature" })
  })

  it("through a change of scheme: a receiver holding the secret and the public key passes v1, v1 + v1a, then v1a", async () => {
    const both = api.createVerifier([secret, publicKey], { now })
    const v1 = signedHeaders()
    const v1a = ed25519Headers()
    const overlap = { ...v1a, "webhook-signature": `${v1a["webhook-signature"]} ${v1["webhook-signature"]}` }
    for (const headers of [v1, overlap, v1a]) expect((await both.verifyAsync(body, headers)).id).toBe(eventId)
    // A receiver that moved to the public key alone passes the overlap and after.
    for (const headers of [overlap, v1a]) expect((await verifier.verifyAsync(body, headers)).id).toBe(eventId)
  })

  it("signs v1a as TweetNaCl does, byte for byte, and TweetNaCl verifies it", async () => {
    const input = { id: eventId, payload: body, timestamp: nowSeconds }
    const signed = await api.signAsync([privateKey, secret], input)
    const [ed, hmac] = signed["webhook-signature"].split(" ")
    expect(ed).toBe(`v1a,${referenceEd25519(edPair.secretKey, eventId, nowSeconds, body)}`)
    expect(hmac).toBe(signedHeaders()["webhook-signature"])
    expect(nacl.sign.detached.verify(Buffer.from(`${eventId}.${nowSeconds}.${body}`), fromBase64(ed!.slice(4)), edPair.publicKey)).toBe(true)
    if (sync) expect(api.sign([privateKey, secret], input)).toEqual(signed)
    else expect(() => api.sign(privateKey, input)).toThrow(/no synchronous Ed25519.*signAsync/)
  })

  it("generates key pairs TweetNaCl agrees with", async () => {
    const pair = await api.generateKeyPair()
    expect(pair.privateKey).toMatch(/^whsk_[A-Za-z0-9+/]{86}==$/)
    expect(pair.publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/)
    const secretKey = fromBase64(pair.privateKey.slice(5))
    expect(Buffer.from(nacl.sign.keyPair.fromSeed(secretKey.subarray(0, 32)).publicKey)).toEqual(Buffer.from(pair.publicKey.slice(5), "base64"))
    const headers = await api.signAsync(pair.privateKey, { id: eventId, payload: body, timestamp: nowSeconds })
    expect((await api.createVerifier(pair.publicKey, { now }).verifyAsync(body, headers)).id).toBe(eventId)
    expect(nacl.sign.detached.verify(
      Buffer.from(`${eventId}.${nowSeconds}.${body}`),
      fromBase64(headers["webhook-signature"].slice(4)),
      nacl.sign.keyPair.fromSecretKey(secretKey).publicKey
    )).toBe(true)
  })

  it("the drop-in Webhook class verifies v1a with a public key, and a public key cannot sign", async () => {
    const wh = new api.Webhook(publicKey, { now })
    if (sync) expect(wh.verify(body, ed25519Headers())).toEqual(event)
    else expect(() => wh.verify(body, ed25519Headers())).toThrow(TypeError)
    expect((await caught(() => wh.sign(eventId, new Date(nowSeconds * 1000), body))).code).toBe("wrong_key_kind")
    expect((await caught(() => new api.Webhook(privateKey))).code).toBe("wrong_key_kind")
  })
})

describe("the Web Crypto entry", () => {
  afterEach(() => vi.restoreAllMocks())

  it("has no synchronous Ed25519, and says to use the async form", () => {
    const verifier = Portable.createVerifier([secret, publicKey], { now })
    expect(() => verifier.verify(body, signedHeaders())).toThrow(TypeError)
    expect(() => verifier.verifySignature(body, ed25519Headers())).toThrow(/verifyAsync/)
    // A verifier holding only secrets keeps its synchronous path.
    expect(Portable.createVerifier(key, { now }).verify(body, signedHeaders()).id).toBe(eventId)
  })

  it("imports each public key once per verifier, not once per delivery", async () => {
    const importKey = vi.spyOn(globalThis.crypto.subtle, "importKey")
    const verify = vi.spyOn(globalThis.crypto.subtle, "verify")
    const verifier = Portable.createVerifier(publicKey, { now })
    for (let i = 0; i < 5; i++) await verifier.verifyAsync(body, ed25519Headers())
    expect(importKey).toHaveBeenCalledTimes(1)
    expect(verify).toHaveBeenCalledTimes(5)
  })
})
