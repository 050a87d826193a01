import type { CourierRates, RateCard } from "./model.ts"
import { roundHalfEven } from "../shared/money.ts"

/** What a courier charges to deliver one stop's parcels. */
export interface CourierPrice {
  readonly courier: string
  readonly amountMinor: number
}

/** A stop's courier price and how it was found. */
export interface StopPrice extends CourierPrice {
  /** True when no courier quoted the stop and the price is an estimate. */
  readonly estimated: boolean
}

export interface PricedStop {
  readonly id: string
  readonly parcels: number
  readonly weight_kg: number
  /** Road distance from the route's start, whole metres: it picks the rate card's band. */
  readonly metresFromStart: number
}

/**
 * One courier's price on the rate card: the first band reaching the stop's
 * distance, `per_parcel · parcels + per_kg · kg`, rounded half to even once.
 * Undefined when the stop lies beyond the courier's last band.
 */
export const courierRate = (rates: CourierRates, stop: PricedStop): number | undefined => {
  const band = rates.bands.find((b) => Math.round(b.up_to_km * 1000) >= stop.metresFromStart)
  if (band === undefined) return undefined
  const grams = Math.round(stop.weight_kg * 1000)
  return roundHalfEven(band.per_parcel_minor * stop.parcels * 1000 + band.per_kg_minor * grams, 1000)
}

/** The cheapest courier on the card for a stop (ties: the courier listed first). */
export const rateCardPrice = (card: RateCard, stop: PricedStop): CourierPrice | undefined => {
  let best: CourierPrice | undefined
  for (const courier of card.couriers) {
    const amount = courierRate(courier, stop)
    if (amount !== undefined && (best === undefined || amount < best.amountMinor)) {
      best = { courier: courier.name, amountMinor: amount }
    }
  }
  return best
}

/**
 * A price for every stop that can have one, in this order: a live quote;
 * else an estimate from the organization's rate card; else an estimate from
 * the route's priced stops (per courier, its mean price per parcel times the
 * stop's parcels, the cheapest courier winning). A stop stays unpriced only
 * when nothing on the route has a price.
 */
export const priceStops = (
  stops: ReadonlyArray<PricedStop>,
  live: ReadonlyMap<string, CourierPrice>,
  rateCard: RateCard | null
): Array<StopPrice | undefined> => {
  const prices: Array<StopPrice | undefined> = stops.map((stop) => {
    const quote = live.get(stop.id)
    if (quote !== undefined) return { ...quote, estimated: false }
    const carded = rateCard === null ? undefined : rateCardPrice(rateCard, stop)
    return carded === undefined ? undefined : { ...carded, estimated: true }
  })
  if (prices.every((p) => p !== undefined)) return prices

  const perCourier = new Map<string, { amount: number; parcels: number }>()
  stops.forEach((stop, i) => {
    const p = prices[i]
    if (p === undefined) return
    const sum = perCourier.get(p.courier) ?? { amount: 0, parcels: 0 }
    perCourier.set(p.courier, { amount: sum.amount + p.amountMinor, parcels: sum.parcels + stop.parcels })
  })
  if (perCourier.size === 0) return prices
  return stops.map((stop, i) => {
    const known = prices[i]
    if (known !== undefined) return known
    let best: StopPrice | undefined
    for (const [courier, sum] of perCourier) {
      const amount = roundHalfEven(sum.amount * stop.parcels, sum.parcels)
      if (best === undefined || amount < best.amountMinor) best = { courier, amountMinor: amount, estimated: true }
    }
    return best
  })
}
