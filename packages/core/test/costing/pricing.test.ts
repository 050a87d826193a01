import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { rateCardQuotes } from "../../src/costing/CourierQuotes.ts"
import type { RateCard } from "../../src/costing/model.ts"
import { courierRate, type PricedStop, priceStops, rateCardPrice } from "../../src/costing/pricing.ts"

const card: RateCard = {
  currency: "EUR",
  couriers: [
    { name: "Fast", bands: [{ up_to_km: 5, per_parcel_minor: 400, per_kg_minor: 50 }, { up_to_km: 20, per_parcel_minor: 600, per_kg_minor: 80 }] },
    { name: "Cheap", bands: [{ up_to_km: 10, per_parcel_minor: 450, per_kg_minor: 20 }] }
  ],
  updated_at: "2026-01-01T00:00:00.000Z"
}

const stop = (id: string, km: number, parcels: number, weight_kg: number): PricedStop => ({
  id,
  parcels,
  weight_kg,
  metresFromStart: km * 1000
})

const X = stop("X", 3, 2, 1.5)
const Y = stop("Y", 12, 1, 0.25)
const Z = stop("Z", 25, 3, 4)

describe("rate card", () => {
  it("prices a stop by the first band that reaches it: per parcel plus per kg", () => {
    // X, 3 km: Fast band ≤ 5 km: 400 × 2 + 50 × 1.5 = 875; Cheap ≤ 10 km: 450 × 2 + 20 × 1.5 = 930.
    expect(courierRate(card.couriers[0]!, X)).toBe(875)
    expect(courierRate(card.couriers[1]!, X)).toBe(930)
    expect(rateCardPrice(card, X)).toEqual({ courier: "Fast", amountMinor: 875 })
    // Y, 12 km: Fast band ≤ 20 km: 600 + 80 × 0.25 = 620; Cheap stops at 10 km.
    expect(courierRate(card.couriers[1]!, Y)).toBeUndefined()
    expect(rateCardPrice(card, Y)).toEqual({ courier: "Fast", amountMinor: 620 })
    // Z, 25 km: beyond every band.
    expect(rateCardPrice(card, Z)).toBeUndefined()
  })

  it("a band's limit is inclusive, to the metre", () => {
    expect(courierRate(card.couriers[0]!, { ...X, metresFromStart: 5000 })).toBe(875)
    expect(courierRate(card.couriers[0]!, { ...X, metresFromStart: 5001 })).toBe(600 * 2 + 80 * 1.5)
  })

  it("rounds the stop's price half-even, once", () => {
    // 400 + 50 × 0.010 = 400.5 → 400; 400 + 50 × 0.030 = 401.5 → 402.
    expect(courierRate(card.couriers[0]!, stop("a", 1, 1, 0.01))).toBe(400)
    expect(courierRate(card.couriers[0]!, stop("b", 1, 1, 0.03))).toBe(402)
  })

  it("is the default courier adapter, silent when the card is in another currency", async () => {
    const request = {
      tenant: { organizationId: "o", environment: "live" as const },
      sender: { name: "S", line1: "l", line2: null, postal_code: null, city: "c", region: null, country: "RO", updated_at: "" },
      pickup: { latitude: 0, longitude: 0 },
      rateCard: card,
      stops: [X, Y, Z].map((s) => ({ ...s, latitude: 0, longitude: 0, address: null }))
    }
    const quotes = await Effect.runPromise(rateCardQuotes.quote({ ...request, currency: "EUR" }))
    expect(Object.fromEntries(quotes)).toEqual({
      X: { courier: "Fast", amountMinor: 875 },
      Y: { courier: "Fast", amountMinor: 620 }
    })
    expect((await Effect.runPromise(rateCardQuotes.quote({ ...request, currency: "RON" }))).size).toBe(0)
  })
})

describe("priceStops", () => {
  it("uses a live quote, else the rate card (estimated), else the route's priced stops (estimated)", () => {
    // X is quoted live by Live at 700 for its 2 parcels; Y comes from the card (Fast 620, 1 parcel);
    // Z (3 parcels, beyond the card): Live's mean 700/2 × 3 = 1050, Fast's 620/1 × 3 = 1860 → Live 1050.
    const prices = priceStops([X, Y, Z], new Map([["X", { courier: "Live", amountMinor: 700 }]]), card)
    expect(prices).toEqual([
      { courier: "Live", amountMinor: 700, estimated: false },
      { courier: "Fast", amountMinor: 620, estimated: true },
      { courier: "Live", amountMinor: 1050, estimated: true }
    ])
  })

  it("rounds a route-average estimate half-even", () => {
    // One quoted stop: 5 for 2 parcels; a 1-parcel stop is 2.5 → 2, a 3-parcel stop 7.5 → 8.
    const prices = priceStops(
      [stop("q", 1, 2, 0), stop("one", 1, 1, 0), stop("three", 1, 3, 0)],
      new Map([["q", { courier: "C", amountMinor: 5 }]]),
      null
    )
    expect(prices.map((p) => p?.amountMinor)).toEqual([5, 2, 8])
  })

  it("leaves every stop unpriced when nothing on the route has a price", () => {
    expect(priceStops([X, Y], new Map(), null)).toEqual([undefined, undefined])
  })
})
