import { describe, expect, it } from "vitest"
import { type WebhookErrorCode, webhookErrorCodes, WebhookVerificationError } from "../src/node.ts"
import {
  body,
  caught,
  ed25519Headers,
  type Entry,
  entries,
  eventId,
  now,
  nowSeconds,
  otherEdPair,
  privateKey,
  publicKey,
  secret,
  signedHeaders
} from "./support.ts"

interface Case {
  readonly name: string
  readonly code: WebhookErrorCode
  readonly message: RegExp
  readonly run: (api: Entry, mode: "sync" | "async") => unknown
}

const verifyWith = (api: Entry, mode: "sync" | "async", payload: unknown, headers: unknown) => {
  const verifier = api.createVerifier(secret, { now })
  return mode === "sync" ? verifier.verify(payload as string, headers as never) : verifier.verifyAsync(payload as string, headers as never)
}

const withHeader = (name: string, value: unknown) => ({ ...signedHeaders(), [name]: value })

const notJson = "not json {"

const cases: ReadonlyArray<Case> = [
  {
    name: "an empty secret",
    code: "invalid_secret",
    message: /empty; is the environment variable set/,
    run: (api) => api.createVerifier("")
  },
  {
    name: "a secret that is not a string",
    code: "invalid_secret",
    message: /got undefined; is the environment variable set/,
    run: (api) => api.createVerifier(undefined as never)
  },
  {
    name: "a secret with a trailing newline",
    code: "invalid_secret",
    message: /trailing whitespace \(often a newline/,
    run: (api) => api.createVerifier(`${secret}\n`)
  },
  {
    name: "a secret that is not base64",
    code: "invalid_secret",
    message: /not whsec_ followed by standard base64/,
    run: (api) => api.createVerifier("whsec_not*base64")
  },
  {
    name: "an empty list of secrets",
    code: "invalid_secret",
    message: /list of secrets is empty/,
    run: (api) => api.createVerifier([])
  },
  {
    name: "a public key cut short",
    code: "invalid_secret",
    message: /public key after whpk_ is 16 bytes; an Ed25519 public key is 32/,
    run: (api) => api.createVerifier(`whpk_${Buffer.alloc(16).toString("base64")}`)
  },
  {
    name: "a private key given to a verifier",
    code: "wrong_key_kind",
    message: /private signing key \(whsk_…\), which only the sender holds; a receiver verifies with the public key \(whpk_…\)/,
    run: (api) => api.createVerifier([secret, privateKey])
  },
  {
    name: "a public key given to sign",
    code: "wrong_key_kind",
    message: /A public key \(whpk_…\) verifies signatures but cannot make them/,
    run: (api, mode) => {
      const input = { id: eventId, payload: body, timestamp: nowSeconds }
      return mode === "sync" ? api.sign(publicKey, input) : api.signAsync(publicKey, input)
    }
  },
  {
    name: "a missing webhook-signature",
    code: "missing_header",
    message: /^Missing required header: webhook-signature\.$/,
    run: (api, mode) => verifyWith(api, mode, body, { ...signedHeaders(), "webhook-signature": undefined })
  },
  {
    name: "all headers missing from an empty object",
    code: "missing_header",
    message: /headers: webhook-id, webhook-timestamp, webhook-signature\. The headers object is empty: pass the request's headers/,
    run: (api, mode) => verifyWith(api, mode, body, {})
  },
  {
    name: "Svix-named headers",
    code: "missing_header",
    message: /svix-\* headers: this receiver expects the Standard Webhooks names/,
    run: (api, mode) => verifyWith(api, mode, body, { "svix-id": eventId, "svix-timestamp": "1", "svix-signature": "v1,x" })
  },
  {
    name: "no headers at all",
    code: "missing_header",
    message: /No headers were given/,
    run: (api, mode) => verifyWith(api, mode, body, undefined)
  },
  {
    name: "a webhook-id sent twice with different values",
    code: "invalid_header",
    message: /webhook-id header appears 2 times with different values/,
    run: (api, mode) => verifyWith(api, mode, body, withHeader("webhook-id", [eventId, "evt_other"]))
  },
  {
    name: "a header value of the wrong type",
    code: "invalid_header",
    message: /webhook-timestamp header must be a string, got number/,
    run: (api, mode) => verifyWith(api, mode, body, withHeader("webhook-timestamp", nowSeconds))
  },
  {
    name: "a timestamp in milliseconds",
    code: "invalid_timestamp",
    message: /got "1772366400000"\. It looks like milliseconds/,
    run: (api, mode) => verifyWith(api, mode, body, withHeader("webhook-timestamp", `${nowSeconds}000`))
  },
  {
    name: "a timestamp that is not an integer",
    code: "invalid_timestamp",
    message: /must be Unix seconds \(an integer\), got "1772366400\.5"/,
    run: (api, mode) => verifyWith(api, mode, body, withHeader("webhook-timestamp", `${nowSeconds}.5`))
  },
  {
    name: "a timestamp with a leading zero",
    code: "invalid_timestamp",
    message: /got "01772366400"/,
    run: (api, mode) => verifyWith(api, mode, body, withHeader("webhook-timestamp", `0${nowSeconds}`))
  },
  {
    name: "a timestamp header sent twice",
    code: "invalid_timestamp",
    message: /arrived more than once/,
    run: (api, mode) => verifyWith(api, mode, body, new Headers([...Object.entries(signedHeaders()), ["webhook-timestamp", "1"]]))
  },
  {
    name: "a stale delivery",
    code: "timestamp_too_old",
    message: /3600 s behind the receiver's clock \(1772366400\), more than the tolerance of 300 s/,
    run: (api, mode) => verifyWith(api, mode, body, signedHeaders({ timestamp: nowSeconds - 3600 }))
  },
  {
    name: "a delivery from the future",
    code: "timestamp_too_new",
    message: /600 s ahead of the receiver's clock/,
    run: (api, mode) => verifyWith(api, mode, body, signedHeaders({ timestamp: nowSeconds + 600 }))
  },
  {
    name: "a signature made with another secret",
    code: "no_matching_signature",
    message: /No signature in webhook-signature matches the payload \(1 v1 entry checked against 1 secret\)\. Check that the payload is the raw request body/,
    run: (api, mode) => verifyWith(api, mode, body, signedHeaders({ keys: [new Uint8Array(32)] }))
  },
  {
    name: "a v1a signature made with another key",
    code: "no_matching_signature",
    message: /\(1 v1a entry checked against 1 public key\)\. .*fetch GET \/v1\/webhooks\/\{id\}\/public-keys again/,
    // Ed25519 is asynchronous where node:crypto is missing; the async form serves both modes here.
    run: (api) => api.createVerifier(publicKey, { now }).verifyAsync(body, ed25519Headers({ secretKeys: [otherEdPair.secretKey] }))
  },
  {
    name: "a v1a-only delivery checked against a secret",
    code: "no_matching_signature",
    message: /no usable signature: it has only v1a \(Ed25519\) entries, which a whsec_ secret cannot check/,
    run: (api, mode) => verifyWith(api, mode, body, ed25519Headers())
  },
  {
    name: "a v1-only delivery checked against a public key",
    code: "no_matching_signature",
    message: /no usable signature: it has only v1 \(HMAC\) entries, which a whpk_ public key cannot check/,
    run: (api) => api.createVerifier(publicKey, { now }).verifyAsync(body, signedHeaders())
  },
  {
    name: "an object turned into a string",
    code: "no_matching_signature",
    message: /the string "\[object Object\]": an object was converted to a string/,
    run: (api, mode) => verifyWith(api, mode, String({}), signedHeaders())
  },
  {
    name: "a Stripe-style signature header",
    code: "no_matching_signature",
    message: /has no usable signature: it has no v1 entries \(entries are written v1,<base64>, not v1=<hex>\)/,
    run: (api, mode) => verifyWith(api, mode, body, withHeader("webhook-signature", "t=1,v1=abcdef"))
  },
  {
    name: "a v1 entry that is not a 32-byte HMAC",
    code: "no_matching_signature",
    message: /its 1 v1 entry is not the padded base64 of a 32-byte HMAC-SHA256 \(44 characters\)/,
    run: (api, mode) => verifyWith(api, mode, body, withHeader("webhook-signature", "v1,c2hvcnQ="))
  },
  {
    name: "no body",
    code: "invalid_payload",
    message: /got undefined\. Is a body parser configured to keep the raw body/,
    run: (api, mode) => verifyWith(api, mode, undefined, signedHeaders())
  },
  {
    name: "a number as the body",
    code: "invalid_payload",
    message: /got number\.$/,
    run: (api, mode) => verifyWith(api, mode, 42, signedHeaders())
  },
  {
    name: "a body parsed by a JSON middleware",
    code: "payload_already_parsed",
    message: /already parsed object.*express\.raw/,
    run: (api, mode) => verifyWith(api, mode, JSON.parse(body), signedHeaders())
  },
  {
    name: "a signed body that is not JSON",
    code: "invalid_json",
    message: /The signature is valid but the body is not JSON/,
    run: (api, mode) => verifyWith(api, mode, notJson, signedHeaders({ payload: notJson }))
  },
  {
    name: "a signed body that is not an envelope",
    code: "invalid_envelope",
    message: /not an event envelope/,
    run: (api, mode) => verifyWith(api, mode, "[]", signedHeaders({ payload: "[]" }))
  }
]

describe("error codes", () => {
  it("every code has a case here", () => {
    expect(new Set(cases.map((c) => c.code))).toEqual(new Set(webhookErrorCodes))
  })

  describe.each(entries)("%s entry", (_, api) => {
    describe.each(["sync", "async"] as const)("%s", (mode) => {
      it.each(cases)("$code: $name", async ({ code, message, run }) => {
        const error = await caught(() => run(api, mode))
        expect(error).toBeInstanceOf(WebhookVerificationError)
        expect(error.name).toBe("WebhookVerificationError")
        expect(error.code).toBe(code)
        expect(error.message).toMatch(message)
      })
    })
  })

  it("never repeats the secret in a message", async () => {
    const withNewline = `${secret}\n`
    const error = await caught(() => entries[0][1].createVerifier(withNewline))
    expect(error.message).not.toContain(secret.slice(6, 20))
  })

  it("recognises an error from another copy of the package, and nothing else", () => {
    const foreign = Object.assign(new Error("x"), { name: "WebhookVerificationError", code: "timestamp_too_old" })
    expect(foreign).toBeInstanceOf(WebhookVerificationError)
    expect(Object.assign(new Error("x"), { name: "WebhookVerificationError", code: "nope" })).not.toBeInstanceOf(
      WebhookVerificationError
    )
    expect(new TypeError("x")).not.toBeInstanceOf(WebhookVerificationError)
    expect({ name: "WebhookVerificationError", code: "invalid_json" }).not.toBeInstanceOf(WebhookVerificationError)
  })
})
