import { fail } from "./errors.ts"
import type { WebhookEvent } from "./events.ts"

/**
 * The raw request body: a string, or bytes (`Uint8Array`, Node's `Buffer`,
 * any other typed array or `DataView`, an `ArrayBuffer`). Bytes are signed
 * and checked as they are; a string is taken as its UTF-8 encoding.
 */
export type WebhookPayload = string | ArrayBuffer | ArrayBufferView

const isArrayBuffer = (value: object): value is ArrayBuffer =>
  value instanceof ArrayBuffer || Object.prototype.toString.call(value) === "[object ArrayBuffer]" ||
  Object.prototype.toString.call(value) === "[object SharedArrayBuffer]"

/** The payload as the HMAC reads it: a string (hashed as UTF-8) or the bytes themselves, never copied. */
export const messageOf = (payload: unknown): string | Uint8Array => {
  if (typeof payload === "string") return payload
  if (payload instanceof Uint8Array) return payload
  if (typeof payload === "object" && payload !== null) {
    if (ArrayBuffer.isView(payload)) return new Uint8Array(payload.buffer, payload.byteOffset, payload.byteLength)
    if (isArrayBuffer(payload)) return new Uint8Array(payload)
    return fail(
      "payload_already_parsed",
      "The payload is an already parsed object, not the raw body. The signature covers the exact bytes that were sent; " +
        "re-serializing parsed JSON does not reproduce them. Pass the raw body: e.g. express.raw({ type: \"application/json\" }), " +
        "a Fastify content-type parser with parseAs: \"buffer\", or await request.arrayBuffer()."
    )
  }
  return fail(
    "invalid_payload",
    `The payload must be the raw body as a string, Uint8Array, Buffer or ArrayBuffer, got ${
      payload === null ? "null" : typeof payload
    }.${payload === undefined ? " Is a body parser configured to keep the raw body?" : ""}`
  )
}

export const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch (error) {
    return fail(
      "invalid_json",
      `The signature is valid but the body is not JSON: ${error instanceof Error ? error.message : String(error)}`
    )
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Checks the envelope's shape (not each type's `data`: that is what the
 * platform signed). Unknown event types and environments pass, so a receiver
 * built against an older list keeps working.
 */
export const envelopeOf = (body: unknown, webhookId: string): WebhookEvent => {
  if (!isRecord(body)) {
    return fail("invalid_envelope", "The body is JSON but not an event envelope (an object with id, type, created, environment and data).")
  }
  const problems: Array<string> = []
  if (typeof body.id !== "string") problems.push("id is not a string")
  if (typeof body.type !== "string") problems.push("type is not a string")
  if (!Number.isSafeInteger(body.created)) problems.push("created is not an integer")
  if (typeof body.environment !== "string") problems.push("environment is not a string")
  if (!isRecord(body.data)) problems.push("data is not an object")
  if (problems.length > 0) fail("invalid_envelope", `The body is not an event envelope: ${problems.join("; ")}.`)
  if (body.id !== webhookId) {
    fail("invalid_envelope", `The body's id ${JSON.stringify(body.id)} differs from the webhook-id header ${JSON.stringify(webhookId)}.`)
  }
  return body as unknown as WebhookEvent
}
