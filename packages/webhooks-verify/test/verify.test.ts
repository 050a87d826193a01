import { describe, expect, it, vi } from "vitest"
import {
  body,
  caught,
  type Entry,
  entries,
  event,
  eventId,
  key,
  now,
  nowSeconds,
  otherSecret,
  referenceSignature,
  secret,
  signedHeaders
} from "./support.ts"

type Verify = (verifier: ReturnType<Entry["createVerifier"]>, payload: unknown, headers: unknown) => Promise<{
  id: string
  timestamp: number
  event?: unknown
}>

const modes: ReadonlyArray<readonly [string, Verify]> = [
  ["verify", async (v, p, h) => v.verify(p as string, h as Record<string, string>)],
  ["verifyAsync", (v, p, h) => v.verifyAsync(p as string, h as Record<string, string>)],
  ["verifySignature", async (v, p, h) => v.verifySignature(p as string, h as Record<string, string>)],
  ["verifySignatureAsync", (v, p, h) => v.verifySignatureAsync(p as string, h as Record<string, string>)]
]

describe.each(entries)("%s entry", (_, api) => {
  describe.each(modes)("%s", (mode, verify) => {
    const parses = !mode.startsWith("verifySignature")
    const verifier = api.createVerifier(secret, { now })

    it("accepts a signed delivery and returns the event id, the timestamp and the envelope", async () => {
      const result = await verify(verifier, body, signedHeaders())
      expect(result.id).toBe(eventId)
      expect(result.timestamp).toBe(nowSeconds)
      if (parses) expect(result.event).toEqual(event)
      else expect(result).not.toHaveProperty("event")
    })

    it("reads the body as raw bytes in every form", async () => {
      const bytes = new TextEncoder().encode(body)
      // A view into the middle of a larger buffer: only its own bytes are the body.
      const padded = new Uint8Array(bytes.length + 8).fill(0x20)
      padded.set(bytes, 4)
      const forms: Array<unknown> = [
        body,
        Buffer.from(body),
        bytes,
        bytes.buffer,
        new DataView(bytes.buffer),
        padded.subarray(4, 4 + bytes.length)
      ]
      for (const form of forms) {
        expect((await verify(verifier, form, signedHeaders())).id).toBe(eventId)
      }
      const tampered = await caught(() => verify(verifier, padded.subarray(3, 4 + bytes.length), signedHeaders()))
      expect(tampered.code).toBe("no_matching_signature")
    })

    it("takes the secret with or without the whsec_ prefix, or as key bytes", async () => {
      for (const s of [secret, secret.slice("whsec_".length), key]) {
        expect((await verify(api.createVerifier(s, { now }), body, signedHeaders())).id).toBe(eventId)
      }
    })

    it("reads headers in any letter case, as arrays, or from a Headers object", async () => {
      const h = signedHeaders()
      const [first, second] = [
        `v1,${referenceSignature(new Uint8Array(32).fill(9), eventId, nowSeconds, body)}`,
        h["webhook-signature"]
      ]
      const forms: Array<unknown> = [
        { "Webhook-Id": h["webhook-id"], "WEBHOOK-TIMESTAMP": h["webhook-timestamp"], "webhook-Signature": h["webhook-signature"] },
        { ...h, "webhook-id": [eventId], "webhook-signature": [first, second] },
        new Headers(h),
        new Headers([
          ["webhook-id", eventId],
          ["webhook-timestamp", String(nowSeconds)],
          ["webhook-signature", first],
          ["webhook-signature", second]
        ])
      ]
      for (const headers of forms) {
        expect((await verify(verifier, body, headers)).id).toBe(eventId)
      }
    })

    it("accepts any matching v1 entry and skips unknown versions and malformed entries", async () => {
      const good = signedHeaders()["webhook-signature"]
      const wrong = `v1,${referenceSignature(new Uint8Array(32).fill(1), eventId, nowSeconds, body)}`
      for (const signature of [`${wrong} ${good}`, `${good} ${wrong}`, `v2,abc v1a,${good.slice(3)} v1,%%% v1, ${good}`]) {
        const result = await verify(verifier, body, { ...signedHeaders(), "webhook-signature": signature })
        expect(result.id).toBe(eventId)
      }
      // The same signature under a version other than v1 does not count.
      const error = await caught(() => verify(verifier, body, { ...signedHeaders(), "webhook-signature": `v2,${good.slice(3)}` }))
      expect(error.code).toBe("no_matching_signature")
      expect(error.message).toMatch(/no v1 entries \(versions found: v2\)/)
    })

    it("verifies with any of several secrets while the receiver rotates", async () => {
      const newKey = new Uint8Array(32).fill(42)
      const rotating = api.createVerifier([secret, newKey], { now })
      expect((await verify(rotating, body, signedHeaders({ keys: [key] }))).id).toBe(eventId)
      expect((await verify(rotating, body, signedHeaders({ keys: [newKey] }))).id).toBe(eventId)
      expect((await verify(rotating, body, signedHeaders({ keys: [newKey, key] }))).id).toBe(eventId)
      const stranger = await caught(() => verify(rotating, body, signedHeaders({ keys: [new Uint8Array(32).fill(3)] })))
      expect(stranger.code).toBe("no_matching_signature")
      expect(stranger.message).toContain("1 v1 entry checked against 2 secrets")
    })

    it("accepts a timestamp exactly 300 s either side of the clock and refuses 301 s", async () => {
      for (const offset of [-300, 0, 300]) {
        const timestamp = nowSeconds + offset
        expect((await verify(verifier, body, signedHeaders({ timestamp }))).timestamp).toBe(timestamp)
      }
      const old = await caught(() => verify(verifier, body, signedHeaders({ timestamp: nowSeconds - 301 })))
      expect(old.code).toBe("timestamp_too_old")
      expect(old.message).toMatch(/301 s behind .* tolerance of 300 s/)
      const ahead = await caught(() => verify(verifier, body, signedHeaders({ timestamp: nowSeconds + 301 })))
      expect(ahead.code).toBe("timestamp_too_new")
      expect(ahead.message).toMatch(/301 s ahead .* tolerance of 300 s/)
    })

    it("takes the receiver's clock in whole seconds", async () => {
      // 999 ms into the second after the tolerance edge is still that second.
      const late = api.createVerifier(secret, { now: () => (nowSeconds + 300) * 1000 + 999 })
      expect((await verify(late, body, signedHeaders())).id).toBe(eventId)
      const later = api.createVerifier(secret, { now: () => (nowSeconds + 301) * 1000 })
      expect((await caught(() => verify(later, body, signedHeaders()))).code).toBe("timestamp_too_old")
    })

    it("honours a custom tolerance and a clock given as a Date", async () => {
      const strict = api.createVerifier(secret, { toleranceSeconds: 10, now: () => new Date(nowSeconds * 1000) })
      expect((await verify(strict, body, signedHeaders({ timestamp: nowSeconds - 10 }))).id).toBe(eventId)
      expect((await caught(() => verify(strict, body, signedHeaders({ timestamp: nowSeconds - 11 })))).code).toBe(
        "timestamp_too_old"
      )
      const exact = api.createVerifier(secret, { toleranceSeconds: 0, now })
      expect((await verify(exact, body, signedHeaders())).id).toBe(eventId)
      expect((await caught(() => verify(exact, body, signedHeaders({ timestamp: nowSeconds + 1 })))).code).toBe(
        "timestamp_too_new"
      )
    })

    it("uses the real clock by default", async () => {
      const live = api.createVerifier(secret)
      const timestamp = Math.floor(Date.now() / 1000)
      expect((await verify(live, body, signedHeaders({ timestamp }))).timestamp).toBe(timestamp)
      expect((await caught(() => verify(live, body, signedHeaders({ timestamp: timestamp - 3600 })))).code).toBe(
        "timestamp_too_old"
      )
    })

    it("verifies a body that is not valid UTF-8 over its exact bytes", async () => {
      const bytes = Buffer.concat([
        Buffer.from(body.slice(0, -2)),
        Buffer.from(`,"note":"caf`),
        Buffer.from([0xe9, 0xff]),
        Buffer.from(`"}}`)
      ])
      const result = await verify(verifier, bytes, signedHeaders({ payload: bytes }))
      expect(result.id).toBe(eventId)
      if (parses) {
        // Decoded as fetch's Response.json() would: invalid sequences become U+FFFD.
        expect((result.event as { data: { note: string } }).data.note).toBe("caf\uFFFD\uFFFD")
      }
      // The same text re-encoded as UTF-8 is a different body.
      const reencoded = Buffer.from(bytes.toString("utf8"))
      expect((await caught(() => verify(verifier, reencoded, signedHeaders({ payload: bytes })))).code).toBe(
        "no_matching_signature"
      )
    })

    it("refuses a tampered body, id or timestamp", async () => {
      const h = signedHeaders()
      const cases: Array<[unknown, unknown]> = [
        [body.replace("12", "13"), h],
        [body, { ...h, "webhook-id": "evt_other" }],
        [body, { ...h, "webhook-timestamp": String(nowSeconds + 1) }],
        [body, { ...h, "webhook-signature": h["webhook-signature"].replace(/^v1,./, "v1,A") }]
      ]
      for (const [payload, headers] of cases) {
        expect((await caught(() => verify(verifier, payload, headers))).code).toBe("no_matching_signature")
      }
    })
  })
})

describe.each(entries)("%s entry: the envelope", (_, api) => {
  const verifier = api.createVerifier(secret, { now })

  it("refuses a body whose id is not the webhook-id", async () => {
    const other = JSON.stringify({ ...event, id: "evt_other" })
    const error = await caught(() => verifier.verify(other, signedHeaders({ payload: other })))
    expect(error.code).toBe("invalid_envelope")
    expect(error.message).toContain(`differs from the webhook-id header "${eventId}"`)
    // Signature-only verification leaves the body alone.
    expect(verifier.verifySignature(other, signedHeaders({ payload: other })).id).toBe(eventId)
  })

  it("refuses JSON that is not an envelope, naming what is wrong", async () => {
    const cases: Array<[unknown, RegExp]> = [
      [[event], /not an event envelope \(an object/],
      [{ ...event, created: "yesterday", data: null }, /created is not an integer; data is not an object/],
      [{ id: eventId }, /type is not a string; created is not an integer; environment is not a string; data is not an object/]
    ]
    for (const [value, message] of cases) {
      const text = JSON.stringify(value)
      const error = await caught(() => verifier.verifyAsync(text, signedHeaders({ payload: text })))
      expect(error.code).toBe("invalid_envelope")
      expect(error.message).toMatch(message)
    }
  })

  it("passes event types and environments it does not know", () => {
    const future = JSON.stringify({ ...event, type: "invoice.voided", environment: "staging" })
    expect(verifier.verify(future, signedHeaders({ payload: future })).event.type).toBe("invoice.voided")
  })

  it("narrows data on the event type", () => {
    const { event: verified } = verifier.verify(body, signedHeaders())
    if (verified.type !== "delivery_route.dispatched") throw new Error(`unexpected type ${verified.type}`)
    const stops: number = verified.data.stop_count
    expect(stops).toBe(12)
  })
})

describe.each(entries)("%s entry: verifyRequest", (_, api) => {
  const verifier = api.createVerifier(secret, { now })
  const request = (payload: BodyInit, headers: Record<string, string>) =>
    new Request("https://receiver.example/webhooks", { method: "POST", body: payload, headers })

  it("reads the raw body and headers of a Fetch Request", async () => {
    const result = await verifier.verifyRequest(request(body, signedHeaders()))
    expect(result.event).toEqual(event)
    const bytes = new Uint8Array([...new TextEncoder().encode(body.slice(0, -1)), 0x20, 0x7d])
    const spaced = await verifier.verifyRequest(request(bytes, signedHeaders({ payload: bytes })))
    expect(spaced.id).toBe(eventId)
  })

  it("refuses a request whose body was already read, and a tampered one", async () => {
    const used = request(body, signedHeaders())
    await used.json()
    const error = await caught(() => verifier.verifyRequest(used))
    expect(error.code).toBe("payload_already_parsed")
    expect(error.message).toContain("request.clone()")
    expect((await caught(() => verifier.verifyRequest(request(`${body} `, signedHeaders())))).code).toBe(
      "no_matching_signature"
    )
    expect((await caught(() => verifier.verifyRequest(body as never))).code).toBe("invalid_payload")
  })
})

describe.each(entries)("%s entry: sign and generateSecret", (_, api) => {
  it("signs with one entry per secret, in the reference format", () => {
    const other = new Uint8Array(32).fill(5)
    const headers = api.sign([secret, other], { id: eventId, payload: body, timestamp: nowSeconds })
    expect(headers).toEqual({
      "webhook-id": eventId,
      "webhook-timestamp": String(nowSeconds),
      "webhook-signature": `v1,${referenceSignature(key, eventId, nowSeconds, body)} v1,${
        referenceSignature(other, eventId, nowSeconds, body)
      }`
    })
    expect(api.createVerifier(other, { now }).verify(body, headers).id).toBe(eventId)
  })

  it("takes the time as a Date or Unix seconds, defaults to now, and refuses milliseconds", () => {
    const date = api.sign(secret, { id: eventId, payload: body, timestamp: new Date(nowSeconds * 1000 + 999) })
    expect(date["webhook-timestamp"]).toBe(String(nowSeconds))
    const before = Math.floor(Date.now() / 1000)
    const current = Number(api.sign(secret, { id: eventId, payload: body })["webhook-timestamp"])
    expect(current).toBeGreaterThanOrEqual(before)
    expect(current).toBeLessThanOrEqual(Math.floor(Date.now() / 1000))
    expect(() => api.sign(secret, { id: eventId, payload: body, timestamp: nowSeconds * 1000 })).toThrow(/milliseconds/)
    expect(() => api.sign(secret, { id: "", payload: body })).toThrow(TypeError)
  })

  it("generates whsec_ secrets of 32 random bytes that sign and verify", () => {
    const secrets = new Set(Array.from({ length: 20 }, () => api.generateSecret()))
    expect(secrets.size).toBe(20)
    for (const generated of secrets) {
      expect(generated).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      expect(Buffer.from(generated.slice(6), "base64")).toHaveLength(32)
    }
    const generated = [...secrets][0]!
    const headers = api.sign(generated, { id: eventId, payload: body, timestamp: nowSeconds })
    expect(api.createVerifier(generated, { now }).verify(body, headers).id).toBe(eventId)
  })
})

describe.each(entries)("%s entry: options", (_, api) => {
  it("refuses a tolerance or a clock that cannot work", () => {
    expect(() => api.createVerifier(secret, { toleranceSeconds: -1 })).toThrow(RangeError)
    expect(() => api.createVerifier(secret, { toleranceSeconds: Number.NaN })).toThrow(RangeError)
    expect(() => api.createVerifier(secret, { now: 5 as never })).toThrow(TypeError)
    const broken = api.createVerifier(secret, { now: () => new Date("not a date") })
    expect(() => broken.verify(body, signedHeaders())).toThrow(/valid Date/)
  })

  it("points at a clock that returns seconds", async () => {
    const seconds = api.createVerifier(secret, { now: () => nowSeconds })
    const error = await caught(() => seconds.verify(body, signedHeaders()))
    expect(error.code).toBe("timestamp_too_new")
    expect(error.message).toContain("if the now option returns seconds, return milliseconds or a Date")
  })
})

describe("a real node:http request", () => {
  it("verifies the raw body and req.headers, duplicate signature lines included", async () => {
    const { createServer, request } = await import("node:http")
    const verifier = entries[0][1].createVerifier(secret, { now })
    const results: Array<{ code?: string; id?: string }> = []
    const server = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (chunk: Buffer) => chunks.push(chunk))
      req.on("end", () => {
        try {
          results.push({ id: verifier.verify(Buffer.concat(chunks), req.headers).id })
          res.writeHead(204).end()
        } catch (error) {
          results.push({ code: (error as { code: string }).code })
          res.writeHead(400).end()
        }
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as { port: number }
    const h = signedHeaders()
    const wrong = `v1,${referenceSignature(new Uint8Array(32).fill(2), eventId, nowSeconds, body)}`
    const send = (payload: string, headers: Array<string>) =>
      new Promise<number>((resolve, reject) => {
        const framing = ["Host", `127.0.0.1:${port}`, "Content-Type", "application/json", "Content-Length", String(Buffer.byteLength(payload))]
        const req = request({ host: "127.0.0.1", port, method: "POST", path: "/", headers: [...framing, ...headers] })
        req.on("response", (res) => {
          res.resume()
          resolve(res.statusCode!)
        })
        req.on("error", reject)
        req.end(payload)
      })
    try {
      // Raw header lists keep the letter case and repeat webhook-signature on two lines.
      const lines = ["Webhook-Id", h["webhook-id"], "Webhook-Timestamp", h["webhook-timestamp"], "Webhook-Signature", wrong]
      expect(await send(body, [...lines, "Webhook-Signature", h["webhook-signature"]])).toBe(204)
      expect(await send(body, lines)).toBe(400)
      expect(await send(`${body}\n`, [...lines, "Webhook-Signature", h["webhook-signature"]])).toBe(400)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
    expect(results).toEqual([{ id: eventId }, { code: "no_matching_signature" }, { code: "no_matching_signature" }])
  })
})

describe("the portable entry under Node", () => {
  it("verifies asynchronously on Web Crypto, importing each key once, and synchronously without it", async () => {
    const portable = entries[1][1]
    const sign = vi.spyOn(globalThis.crypto.subtle, "sign")
    const importKey = vi.spyOn(globalThis.crypto.subtle, "importKey")
    try {
      const verifier = portable.createVerifier(secret, { now })
      expect((await verifier.verifyAsync(body, signedHeaders())).id).toBe(eventId)
      expect((await verifier.verifyAsync(Buffer.from(body), signedHeaders())).id).toBe(eventId)
      expect(sign).toHaveBeenCalledTimes(2)
      expect(importKey).toHaveBeenCalledTimes(1)
      expect(verifier.verify(body, signedHeaders()).id).toBe(eventId)
      expect(sign).toHaveBeenCalledTimes(2)
    } finally {
      sign.mockRestore()
      importKey.mockRestore()
    }
  })
})
