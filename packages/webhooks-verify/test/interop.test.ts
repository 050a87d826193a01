import * as StandardWebhooks from "standardwebhooks"
import * as Svix from "svix"
import { describe, expect, it } from "vitest"
import { body, caught, entries, event, eventId, secret } from "./support.ts"

const references = [
  ["standardwebhooks", StandardWebhooks.Webhook],
  ["svix", Svix.Webhook]
] as const

/** Now, in whole seconds: the reference libraries read the real clock. */
const current = () => new Date(Math.floor(Date.now() / 1000) * 1000)

const headersFor = (signature: string, at: Date) => ({
  "webhook-id": eventId,
  "webhook-timestamp": String(at.getTime() / 1000),
  "webhook-signature": signature
})

describe.each(entries)("%s entry", (_, api) => {
  describe.each(references)("with %s", (name, Reference) => {
    it(`verifies what ${name} signs, sync and async, and the drop-in class does too`, async () => {
      const at = current()
      const headers = headersFor(new Reference(secret).sign(eventId, at, body), at)
      const verifier = api.createVerifier(secret)
      expect(verifier.verify(body, headers).event).toEqual(event)
      expect((await verifier.verifyAsync(Buffer.from(body), headers)).event).toEqual(event)
      expect(new api.Webhook(secret).verify(body, headers)).toEqual(event)
      // Rotation on the sender's side: their entry next to one we cannot match.
      const rotated = { ...headers, "webhook-signature": `v1,${"A".repeat(43)}= ${headers["webhook-signature"]}` }
      expect(verifier.verifySignature(body, rotated).id).toBe(eventId)
    })

    it(`signs what ${name} verifies, with one entry per secret`, () => {
      const otherSecret = api.generateSecret()
      const headers = api.sign([otherSecret, secret], { id: eventId, payload: body, timestamp: current() })
      expect(headers["webhook-signature"].split(" ")).toHaveLength(2)
      expect(() => new Reference(secret).verify(body, headers)).not.toThrow()
      expect(() => new Reference(otherSecret).verify(body, headers)).not.toThrow()
      expect(() => new Reference(api.generateSecret()).verify(body, headers)).toThrow(StandardWebhooks.WebhookVerificationError)
    })

    it(`produces the same signature as ${name} for the same message`, () => {
      const at = current()
      expect(new api.Webhook(secret).sign(eventId, at, body)).toBe(new Reference(secret).sign(eventId, at, body))
      expect(api.sign(secret, { id: eventId, payload: body, timestamp: at })["webhook-signature"]).toBe(
        new Reference(secret).sign(eventId, at, body)
      )
    })

    it(`agrees with ${name} on a tampered body`, async () => {
      const at = current()
      const headers = headersFor(new Reference(secret).sign(eventId, at, body), at)
      const tampered = body.replace("R-2026", "R-2027")
      expect(() => new Reference(secret).verify(tampered, headers)).toThrow(/No matching signature/)
      expect((await caught(() => api.createVerifier(secret).verify(tampered, headers))).code).toBe("no_matching_signature")
    })
  })

  describe("where the reference library falls short", () => {
    it("verifies a non-UTF-8 Buffer body that standardwebhooks turns into a string and refuses", () => {
      const bytes = Buffer.concat([Buffer.from(body.slice(0, -2)), Buffer.from(`,"n":"`), Buffer.from([0xe9]), Buffer.from(`"}}`)])
      const at = current()
      const headers = api.sign(secret, { id: eventId, payload: bytes, timestamp: at })
      expect(api.createVerifier(secret).verifySignature(bytes, headers).id).toBe(eventId)
      expect(new api.Webhook(secret).verify(bytes, headers)).toMatchObject({ id: eventId })
      expect(() => new StandardWebhooks.Webhook(secret).verify(bytes, headers)).toThrow(/No matching signature/)
    })

    it("reads a fetch Headers object, which standardwebhooks refuses", async () => {
      const at = current()
      const headers = new Headers(api.sign(secret, { id: eventId, payload: body, timestamp: at }))
      expect((await api.createVerifier(secret).verifyAsync(body, headers)).id).toBe(eventId)
      expect(() => new StandardWebhooks.Webhook(secret).verify(body, headers as never)).toThrow(/Missing required headers/)
    })

    it("tells errors apart by code where standardwebhooks has only messages", async () => {
      const old = new Date(current().getTime() - 3_600_000)
      const headers = api.sign(secret, { id: eventId, payload: body, timestamp: old })
      const reference = await caught(() => new StandardWebhooks.Webhook(secret).verify(body, headers))
      expect(reference).not.toHaveProperty("code")
      expect((await caught(() => new api.Webhook(secret).verify(body, headers))).code).toBe("timestamp_too_old")
    })
  })
})
