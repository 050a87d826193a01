import { createHmac } from "node:crypto"
import nacl from "tweetnacl"
import * as Portable from "../src/index.ts"
import * as Node from "../src/node.ts"

/** Both entry points: `node` on node:crypto, `portable` on Web Crypto and the plain-JS HMAC. */
export const entries = [
  ["node", Node],
  ["portable", Portable]
] as const

export type Entry = typeof Node

/** A fixed secret, so failures are reproducible; its key is the 32 bytes 0..31. */
export const key = Uint8Array.from({ length: 32 }, (_, i) => i)
export const secret = `whsec_${Buffer.from(key).toString("base64")}`
export const otherSecret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`

/** 2026-03-01T12:00:00Z */
export const nowSeconds = 1_772_366_400
export const now = () => nowSeconds * 1000

export const eventId = "evt_dsp_0190f5c27a1b7c3d8e4f0123456789ab_1"

export const event = {
  id: eventId,
  type: "delivery_route.dispatched",
  created: nowSeconds,
  environment: "live",
  data: {
    id: "0190f5c2-7a1b-7c3d-8e4f-0123456789ab",
    number: "R-2026-0042",
    driver_id: "0190f5c2-7a1b-7c3d-8e4f-000000000001",
    vehicle_id: "0190f5c2-7a1b-7c3d-8e4f-000000000002",
    stop_count: 12,
    dispatched_at: "2026-03-01T11:59:58.000Z",
    organizationId: "0190f5c2-7a1b-7c3d-8e4f-000000000003"
  }
} as const

export const body = JSON.stringify(event)

/** The reference computation, written out with node:crypto: base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`. */
export const referenceSignature = (
  rawKey: Uint8Array,
  id: string,
  timestamp: number | string,
  payload: string | Uint8Array
): string => createHmac("sha256", rawKey).update(`${id}.${timestamp}.`).update(payload).digest("base64")

export const signedHeaders = (
  options: { id?: string; timestamp?: number | string; payload?: string | Uint8Array; keys?: ReadonlyArray<Uint8Array> } = {}
) => {
  const id = options.id ?? eventId
  const timestamp = options.timestamp ?? nowSeconds
  const payload = options.payload ?? body
  const keys = options.keys ?? [key]
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": keys.map((k) => `v1,${referenceSignature(k, id, timestamp, payload)}`).join(" ")
  }
}


/** The error a call throws or rejects with. */
export const caught = async (run: () => unknown): Promise<Error & { code?: string }> => {
  try {
    await run()
  } catch (error) {
    return error as Error & { code?: string }
  }
  throw new Error("expected an error, none was thrown")
}

/**
 * A fixed Ed25519 key pair for `v1a`, made by TweetNaCl (an implementation
 * independent of the package's node:crypto and Web Crypto): `whsk_` is the
 * 64-byte seed‖public key, `whpk_` the 32-byte public key.
 */
export const edPair = nacl.sign.keyPair.fromSeed(Uint8Array.from({ length: 32 }, (_, i) => 200 - i))
export const privateKey = `whsk_${Buffer.from(edPair.secretKey).toString("base64")}`
export const publicKey = `whpk_${Buffer.from(edPair.publicKey).toString("base64")}`
export const otherEdPair = nacl.sign.keyPair.fromSeed(new Uint8Array(32).fill(9))
export const otherPublicKey = `whpk_${Buffer.from(otherEdPair.publicKey).toString("base64")}`

/** TweetNaCl's Ed25519 signature of `{id}.{timestamp}.{body}`, base64. */
export const referenceEd25519 = (
  secretKey: Uint8Array,
  id: string,
  timestamp: number | string,
  payload: string | Uint8Array
): string => {
  const prefix = Buffer.from(`${id}.${timestamp}.`)
  return Buffer.from(nacl.sign.detached(Buffer.concat([prefix, Buffer.from(payload)]), secretKey)).toString("base64")
}

/** Headers of a `v1a` delivery signed by TweetNaCl, one entry per secret key given. */
export const ed25519Headers = (
  options: { id?: string; timestamp?: number | string; payload?: string | Uint8Array; secretKeys?: ReadonlyArray<Uint8Array> } = {}
) => {
  const id = options.id ?? eventId
  const timestamp = options.timestamp ?? nowSeconds
  const payload = options.payload ?? body
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": (options.secretKeys ?? [edPair.secretKey]).map((k) => `v1a,${referenceEd25519(k, id, timestamp, payload)}`).join(" ")
  }
}
