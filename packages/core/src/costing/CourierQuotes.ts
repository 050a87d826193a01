import { Context, Effect } from "effect"
import type { Address } from "../routes/model.ts"
import type { Point } from "../routes/geo.ts"
import type { Tenant } from "../shared/tenant.ts"
import type { RateCard, SenderAddress } from "./model.ts"
import { type CourierPrice, rateCardPrice } from "./pricing.ts"

export interface QuoteStop extends Point {
  readonly id: string
  readonly address: Address | null
  readonly parcels: number
  readonly weight_kg: number
  /** Road distance from the route's start, whole metres. */
  readonly metresFromStart: number
}

export interface QuoteRequest {
  readonly tenant: Tenant
  /** Quotes in any other currency are ignored. */
  readonly currency: string
  /** Where the courier collects: the sender address and the route's start coordinates. */
  readonly sender: SenderAddress
  readonly pickup: Point
  /** The organization's rate card, when it has one. */
  readonly rateCard: RateCard | null
  readonly stops: ReadonlyArray<QuoteStop>
}

export interface CourierQuotesShape {
  /**
   * The best courier price per stop id. Never fails and never waits longer
   * than the adapter's timeout: a courier that is slow or broken simply quotes
   * nothing, and its stops are estimated.
   */
  readonly quote: (request: QuoteRequest) => Effect.Effect<ReadonlyMap<string, CourierPrice>>
}

/** The default adapter: the organization's own rate card (per parcel and per kg, by distance band). */
export const rateCardQuotes: CourierQuotesShape = {
  quote: (request) =>
    Effect.sync(() => {
      const quotes = new Map<string, CourierPrice>()
      const card = request.rateCard
      if (card === null || card.currency !== request.currency) return quotes
      for (const stop of request.stops) {
        const price = rateCardPrice(card, stop)
        if (price !== undefined) quotes.set(stop.id, price)
      }
      return quotes
    })
}

/**
 * Where courier prices come from. Without a layer of its own the rate card
 * answers; `HttpCourierQuotes.layer` asks couriers' quote APIs instead.
 */
export class CourierQuotes extends Context.Reference<CourierQuotesShape>("@opsplatform/core/costing/CourierQuotes", {
  defaultValue: () => rateCardQuotes
}) {}
