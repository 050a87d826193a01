import * as StandardWebhooks from "standardwebhooks"
import { describe, expect, it } from "vitest"
import { body, caught, entries, event, eventId, key, secret } from "./support.ts"

const current = () => new Date(Math.floor(Date.now() / 1000) * 1000)

/** The same call on the reference class and on ours; both must agree on the result or on failing. */
const both = (
  api: (typeof entries)[number][1],
  secretValue: string | Uint8Array,
  options: { format?: "raw" } | undefined,
  call: (webhook: { verify: (...args: Array<never>) => unknown }) => unknown
) => {
  const run = (make: () => { verify: (...args: Array<never>) => unknown }) => {
    try {
      return { value: call(make()) }
    } catch (error) {
      return { error: (error as Error).name }
    }
  }
  return {
    reference: run(() => new StandardWebhooks.Webhook(secretValue, options) as never),
    ours: run(() => new api.Webhook(secretValue, options) as never)
  }
}

describe.each(entries)("%s entry: Webhook, the drop-in class", (_, api) => {
  const at = current()
  const signature = new StandardWebhooks.Webhook(secret).sign(eventId, at, body)
  const headers = { "webhook-id": eventId, "webhook-timestamp": String(at.getTime() / 1000), "webhook-signature": signature }

  it("returns what the reference returns: the parsed body, undefined without jsonParse or for an empty body", () => {
    const cases: Array<(w: { verify: (...args: Array<never>) => unknown }) => unknown> = [
      (w) => w.verify(body as never, headers as never),
      (w) => w.verify(Buffer.from(body) as never, headers as never),
      (w) => w.verify(body as never, headers as never, { jsonParse: false } as never)
    ]
    for (const call of cases) {
      const { reference, ours } = both(api, secret, undefined, call)
      expect(ours).toEqual(reference)
    }
    expect(both(api, secret, undefined, cases[0]!).ours).toEqual({ value: event })

    const emptyHeaders = { ...headers, "webhook-signature": new StandardWebhooks.Webhook(secret).sign(eventId, at, "") }
    const empty = both(api, secret, undefined, (w) => w.verify("" as never, emptyHeaders as never))
    expect(empty.ours).toEqual({ value: undefined })
    expect(empty.ours).toEqual(empty.reference)
  })

  it("fails where the reference fails, with WebhookVerificationError and a code", async () => {
    const failing: Array<[Record<string, string>, string]> = [
      [{ ...headers, "webhook-signature": "v1,bm9wZQ==" }, "no_matching_signature"],
      [{ "webhook-id": eventId }, "missing_header"],
      [{ ...headers, "webhook-timestamp": "soon" }, "invalid_timestamp"],
      [{ ...headers, "webhook-timestamp": String(at.getTime() / 1000 - 301) }, "timestamp_too_old"],
      [{ ...headers, "webhook-timestamp": String(at.getTime() / 1000 + 400) }, "timestamp_too_new"]
    ]
    for (const [h, code] of failing) {
      const { reference, ours } = both(api, secret, undefined, (w) => w.verify(body as never, h as never))
      expect(reference).toEqual({ error: "WebhookVerificationError" })
      expect(ours).toEqual({ error: "WebhookVerificationError" })
      const error = await caught(() => new api.Webhook(secret).verify(body, h))
      expect(error).toBeInstanceOf(api.WebhookVerificationError)
      expect(error.code).toBe(code)
    }
  })

  it("signs exactly as the reference, also with a raw-format key", () => {
    expect(new api.Webhook(secret).sign(eventId, at, body)).toBe(signature)
    expect(new api.Webhook(secret).sign(eventId, at, Buffer.from(body))).toBe(signature)
    const raw = "a raw key of any length"
    expect(new api.Webhook(raw, { format: "raw" }).sign(eventId, at, body)).toBe(
      new StandardWebhooks.Webhook(raw, { format: "raw" }).sign(eventId, at, body)
    )
    expect(new api.Webhook(key, { format: "raw" }).sign(eventId, at, body)).toBe(signature)
  })

  it("accepts the tolerance and clock options the reference lacks", () => {
    const lenient = new api.Webhook(secret, { toleranceSeconds: 3600, now: () => at.getTime() + 3_000_000 })
    expect(lenient.verify(body, headers)).toEqual(event)
  })

  it("refuses an empty secret like the reference", async () => {
    expect(() => new StandardWebhooks.Webhook("")).toThrow()
    expect((await caught(() => new api.Webhook(""))).code).toBe("invalid_secret")
    expect((await caught(() => new api.Webhook("", { format: "raw" }))).code).toBe("invalid_secret")
  })
})
