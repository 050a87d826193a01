import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Geo, Pricing } from "@opsplatform/core"
import type { RateCard } from "@opsplatform/core/costing/model"
import { type Fixture, sampleDepot, sampleFleetCostProfile, sampleRateCard, sampleSenderAddress, sampleStops } from "@opsplatform/testing"
import { type FakeCourier, startFakeCourier } from "@opsplatform/testing/fakeCourier"
import { testDatabases } from "./support/databases.ts"
import { call, seedFixture, startTestServer, type TestServer } from "./support/server.ts"

const routeBody = (stops: number) => ({
  name: "Comparison run",
  route_date: "2026-03-02T07:00:00+02:00",
  start_latitude: sampleDepot.latitude,
  start_longitude: sampleDepot.longitude,
  stops: sampleStops(stops)
})

/** An organization with every costing setting (the sender address unless told otherwise) and one route. */
const seedRoute = async (server: TestServer, stops: number, options: { readonly sender?: boolean } = {}) => {
  const f = await seedFixture(server)
  const put = (path: string, body: unknown) => call(server, "PUT", path, { token: f.tokens.api, body })
  await put("/v1/fleet-cost-profile", sampleFleetCostProfile)
  await put("/v1/courier-rate-card", sampleRateCard)
  if (options.sender ?? true) await put("/v1/sender-address", sampleSenderAddress)
  const route = (await call(server, "POST", "/v1/delivery-routes", { token: f.tokens.api, body: routeBody(stops) })).json.data
  return { f, route }
}

const compare = (server: TestServer, f: Fixture, routeId: string, token = f.tokens.api) =>
  call(server, "GET", `/v1/delivery-routes/${routeId}/cost-comparison`, { token })

const rateLimitFields = (header: string | null) => {
  const m = /^"heavy";r=(\d+);t=(\d+)$/.exec(header ?? "")
  if (m === null) throw new Error(`unexpected RateLimit header: ${header}`)
  return { r: Number(m[1]), t: Number(m[2]) }
}

for (const db of testDatabases()) {
  describe(`cost comparison: heavy rate tier (${db.name})`, () => {
    let server: TestServer
    beforeAll(async () => {
      server = await startTestServer(db.choice(), { env: { OPSPLATFORM_HEAVY_RATE_PER_MIN: "3" } })
    })
    afterAll(() => server.close())

    it("admits 3 per minute per organization, then 429 rate_limited with Retry-After and the IETF fields", async () => {
      // A minute boundary between the calls would reset the count; a fresh organization retries then.
      for (let attempt = 1; ; attempt++) {
        const { f, route } = await seedRoute(server, 3)
        const answers = []
        for (let i = 0; i < 4; i++) answers.push(await compare(server, f, route.id))
        const first = rateLimitFields(answers[0]!.headers.get("ratelimit"))
        const last = rateLimitFields(answers[3]!.headers.get("ratelimit"))
        if (last.t > first.t && attempt < 3) continue
        expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429])
        for (const a of answers) expect(a.headers.get("ratelimit-policy")).toBe(`"heavy";q=3;w=60`)
        expect(answers.map((a) => rateLimitFields(a.headers.get("ratelimit")).r)).toEqual([2, 1, 0, 0])
        const refused = answers[3]!
        expect(refused.json).toMatchObject({ data: null, error: { code: "rate_limited" } })
        expect(refused.json.error.retryAfterSec).toBe(last.t)
        expect(refused.headers.get("retry-after")).toBe(String(last.t))
        expect(last.t).toBeGreaterThanOrEqual(1)
        expect(last.t).toBeLessThanOrEqual(60)
        // The limit is the organization's: its sandbox shares it, another organization does not.
        expect((await compare(server, f, route.id, f.tokens.sandbox)).status).toBe(429)
        const other = await seedRoute(server, 3)
        expect((await compare(server, other.f, other.route.id)).status).toBe(200)
        // Other endpoints are not in the heavy tier.
        expect((await call(server, "GET", `/v1/delivery-routes/${route.id}`, { token: f.tokens.api })).status).toBe(200)
        break
      }
    })
  })

  describe(`cost comparison: courier quote APIs (${db.name})`, () => {
    let server: TestServer
    let slow: FakeCourier
    let quick: FakeCourier
    const skipped = new Set<string>()
    beforeAll(async () => {
      slow = await startFakeCourier({ delayMs: 10_000, perParcelMinor: 1 })
      quick = await startFakeCourier({ perParcelMinor: 800, perKgMinor: 0, token: "quick-token", skip: (ref) => skipped.has(ref) })
      server = await startTestServer(db.choice(), {
        env: {
          OPSPLATFORM_COURIERS: JSON.stringify([
            { name: "Slow", url: slow.url },
            { name: "Quick", url: quick.url, token: "quick-token" }
          ]),
          OPSPLATFORM_COURIER_TIMEOUT_MS: "500"
        }
      })
    })
    afterAll(async () => {
      await server.close()
      await Promise.all([slow.close(), quick.close()])
    })

    it("a slow courier never holds the request beyond the timeout; stops nobody quoted are estimated", async () => {
      const { f, route } = await seedRoute(server, 6)
      for (const s of route.stops.slice(0, 2)) skipped.add(s.id)
      const slowBefore = slow.requests.length
      const began = performance.now()
      const res = await compare(server, f, route.id)
      const elapsed = performance.now() - began
      expect(res.status).toBe(200)
      expect(elapsed).toBeLessThan(2_500)
      expect(slow.requests.length).toBe(slowBefore + 1)
      expect(quick.requests.at(-1)!.headers.authorization).toBe("Bearer quick-token")
      // Quick quotes 800 per parcel for stops 3–6; stops 1–2 come from the rate card, as estimates.
      const card: RateCard = { ...sampleRateCard, updated_at: "" }
      const expected = route.stops.map((s: any, i: number) =>
        i < 2
          ? Pricing.rateCardPrice(card, {
            ...s,
            metresFromStart: Math.round(Geo.roadMetres(Geo.defaultDistanceModel, sampleDepot, s))
          })!.amountMinor
          : 800 * s.parcels
      )
      expect(res.json.data).toMatchObject({
        pricedStops: 6,
        unpricedStops: 0,
        estimatedStops: 2,
        estimatedPercent: 33.3,
        courierProjectedMinor: expected.reduce((a: number, b: number) => a + b, 0),
        senderMissing: false
      })
    })

    it("without a sender address no courier is asked and every stop is estimated", async () => {
      const { f, route } = await seedRoute(server, 4, { sender: false })
      const asked = quick.requests.length
      const res = await compare(server, f, route.id)
      expect(res.json.data).toMatchObject({ senderMissing: true, estimatedStops: 4, estimatedPercent: 100, pricedStops: 4 })
      expect(quick.requests.length).toBe(asked)
    })
  })

  describe(`cost comparison: failing couriers (${db.name})`, () => {
    let server: TestServer
    let failing: FakeCourier
    beforeAll(async () => {
      failing = await startFakeCourier({ failWith: 503 })
      server = await startTestServer(db.choice(), {
        env: { OPSPLATFORM_COURIERS: JSON.stringify([{ name: "Down", url: failing.url }]) }
      })
    })
    afterAll(async () => {
      await server.close()
      await failing.close()
    })

    it("a failing courier's stops are all estimated and the request still succeeds", async () => {
      const { f, route } = await seedRoute(server, 5)
      const res = await compare(server, f, route.id)
      expect(res.status).toBe(200)
      expect(failing.requests.length).toBeGreaterThanOrEqual(1)
      expect(res.json.data).toMatchObject({ pricedStops: 5, estimatedStops: 5, estimatedPercent: 100 })
    })
  })
}
