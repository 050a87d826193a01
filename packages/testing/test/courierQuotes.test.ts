import { Effect } from "effect"
import { FetchHttpClient } from "effect/http"
import { afterEach, describe, expect, it } from "vitest"
import { HttpCourierQuotes } from "@opsplatform/core"
import type { QuoteRequest } from "@opsplatform/core/costing/CourierQuotes"
import { type FakeCourier, startFakeCourier } from "@opsplatform/testing/fakeCourier"

const request: QuoteRequest = {
  tenant: { organizationId: "00000000-0000-4000-8000-000000000001", environment: "live" },
  currency: "RON",
  sender: { name: "Depozit Nord", line1: "Str. Depozitului 1", line2: null, postal_code: "077190", city: "Voluntari", region: null, country: "RO", updated_at: "2026-01-01T00:00:00.000Z" },
  pickup: { latitude: 44.49, longitude: 26.17 },
  rateCard: null,
  stops: [
    { id: "a", latitude: 44.43, longitude: 26.1, address: null, parcels: 2, weight_kg: 3, metresFromStart: 9000 },
    { id: "b", latitude: 44.45, longitude: 26.08, address: null, parcels: 1, weight_kg: 1, metresFromStart: 11000 }
  ]
}

const couriers: Array<FakeCourier> = []
const start = async (options: Parameters<typeof startFakeCourier>[0]) => {
  const c = await startFakeCourier(options)
  couriers.push(c)
  return c
}
afterEach(async () => {
  await Promise.all(couriers.splice(0).map((c) => c.close()))
})

const quote = (list: ReadonlyArray<{ name: string; url: string; token?: string }>, timeout: string = "1 second") =>
  Effect.runPromise(
    Effect.gen(function*() {
      const adapter = yield* HttpCourierQuotes.make({ couriers: list, timeout })
      return Object.fromEntries(yield* adapter.quote(request))
    }).pipe(Effect.provide(FetchHttpClient.layer))
  )

describe("HTTP courier quotes", () => {
  it("sends the contract's request with the courier's token and keeps the cheapest quote per stop", async () => {
    // Fast: 500/parcel + 100/kg → a: 1000 + 300 = 1300, b: 500 + 100 = 600.
    // Budget: 450/parcel + 150/kg → a: 900 + 450 = 1350, b: 450 + 150 = 600 (a tie: Fast, listed first, keeps it).
    const fast = await start({ perParcelMinor: 500, perKgMinor: 100, token: "fast-secret" })
    const budget = await start({ perParcelMinor: 450, perKgMinor: 150 })
    const result = await quote([{ name: "Fast", url: fast.url, token: "fast-secret" }, { name: "Budget", url: budget.url }])
    expect(result).toEqual({ a: { courier: "Fast", amountMinor: 1300 }, b: { courier: "Fast", amountMinor: 600 } })
    expect(fast.requests[0]!.headers.authorization).toBe("Bearer fast-secret")
    expect(budget.requests[0]!.headers.authorization).toBeUndefined()
    expect(fast.requests[0]!.body).toEqual({
      currency: "RON",
      pickup: {
        name: "Depozit Nord",
        address: { line1: "Str. Depozitului 1", line2: null, postal_code: "077190", city: "Voluntari", region: null, country: "RO" },
        latitude: 44.49,
        longitude: 26.17
      },
      parcels: [
        { reference: "a", count: 2, weight_kg: 3, latitude: 44.43, longitude: 26.1, address: null },
        { reference: "b", count: 1, weight_kg: 1, latitude: 44.45, longitude: 26.08, address: null }
      ]
    })
  })

  it("a courier that does not serve a stop leaves it to the others", async () => {
    const partial = await start({ perParcelMinor: 100, perKgMinor: 0, skip: (ref) => ref === "b" })
    const full = await start({ perParcelMinor: 900, perKgMinor: 0 })
    expect(await quote([{ name: "Partial", url: partial.url }, { name: "Full", url: full.url }])).toEqual({
      a: { courier: "Partial", amountMinor: 200 },
      b: { courier: "Full", amountMinor: 900 }
    })
  })

  it("never waits for a slow courier beyond the timeout; the others still count", async () => {
    const slow = await start({ delayMs: 5_000, perParcelMinor: 1 })
    const quick = await start({ perParcelMinor: 700, perKgMinor: 0 })
    const began = performance.now()
    const result = await quote([{ name: "Slow", url: slow.url }, { name: "Quick", url: quick.url }], "300 millis")
    const elapsed = performance.now() - began
    expect(result).toEqual({ a: { courier: "Quick", amountMinor: 1400 }, b: { courier: "Quick", amountMinor: 700 } })
    expect(slow.requests).toHaveLength(1)
    expect(elapsed).toBeLessThan(2_000)
  })

  it("a failing, unauthorized, foreign-currency or unreachable courier quotes nothing", async () => {
    const failing = await start({ failWith: 503 })
    const locked = await start({ token: "right" })
    const euros = await start({ currency: "EUR" })
    const closed = await start({})
    await closed.close()
    const result = await quote([
      { name: "Failing", url: failing.url },
      { name: "Locked", url: locked.url, token: "wrong" },
      { name: "Euros", url: euros.url },
      { name: "Closed", url: closed.url }
    ])
    expect(result).toEqual({})
    expect(failing.requests).toHaveLength(1)
    expect(euros.requests).toHaveLength(1)
  })
})
