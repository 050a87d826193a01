import { Duration, Effect, Layer, Option, Schema } from "effect"
import { HttpClient, HttpClientRequest, HttpClientResponse } from "effect/http"
import { CourierQuotes, type CourierQuotesShape, type QuoteRequest } from "./CourierQuotes.ts"
import type { CourierPrice } from "./pricing.ts"

/** A courier quote API the platform asks (contract: docs/decisions.md, "Courier quote API"). */
export interface HttpCourier {
  /** The name the comparison reports for this courier's prices. */
  readonly name: string
  readonly url: string
  /** Sent as `Authorization: Bearer <token>` when set; never logged. */
  readonly token?: string | undefined
}

export interface HttpCourierOptions {
  readonly couriers: ReadonlyArray<HttpCourier>
  /** How long a courier has to answer; past it, its stops are estimated (default 2 s). */
  readonly timeout?: Duration.Input | undefined
}

export const DEFAULT_COURIER_TIMEOUT: Duration.Input = "2 seconds"

/** The courier's answer: a price per parcel reference it serves; stops it leaves out it does not serve. */
export const QuoteResponse = Schema.Struct({
  currency: Schema.String,
  quotes: Schema.Array(Schema.Struct({
    reference: Schema.String,
    amountMinor: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
  }))
})

/** The body sent to a courier: one entry per stop, referenced by the stop id. */
export const quoteRequestBody = (request: QuoteRequest) => ({
  currency: request.currency,
  pickup: {
    name: request.sender.name,
    address: {
      line1: request.sender.line1,
      line2: request.sender.line2,
      postal_code: request.sender.postal_code,
      city: request.sender.city,
      region: request.sender.region,
      country: request.sender.country
    },
    latitude: request.pickup.latitude,
    longitude: request.pickup.longitude
  },
  parcels: request.stops.map((s) => ({
    reference: s.id,
    count: s.parcels,
    weight_kg: s.weight_kg,
    latitude: s.latitude,
    longitude: s.longitude,
    address: s.address
  }))
})

/**
 * Asks every configured courier at once, each bounded by the timeout, and
 * keeps the cheapest quote per stop (ties: the courier configured first). A
 * courier that answers late, with an error status, with a body that is not
 * the contract or in another currency contributes nothing.
 */
export const make = (options: HttpCourierOptions) =>
  Effect.map(HttpClient.HttpClient, (base): CourierQuotesShape => {
    const client = HttpClient.filterStatusOk(base)
    const timeout = options.timeout ?? DEFAULT_COURIER_TIMEOUT
    const ask = (courier: HttpCourier, request: QuoteRequest) => {
      const known = new Set(request.stops.map((s) => s.id))
      let outgoing = HttpClientRequest.post(courier.url).pipe(
        HttpClientRequest.acceptJson,
        HttpClientRequest.bodyJsonUnsafe(quoteRequestBody(request))
      )
      if (courier.token !== undefined) outgoing = HttpClientRequest.bearerToken(outgoing, courier.token)
      return client.execute(outgoing).pipe(
        Effect.flatMap(HttpClientResponse.schemaBodyJson(QuoteResponse)),
        Effect.timeoutOption(timeout),
        Effect.map(Option.match({
          onNone: () => ({ courier, quotes: [] as ReadonlyArray<CourierPrice & { reference: string }>, problem: "timed out" }),
          onSome: (body) =>
            body.currency !== request.currency
              ? { courier, quotes: [], problem: `quoted in ${body.currency}, not ${request.currency}` }
              : {
                courier,
                quotes: body.quotes.filter((q) => known.has(q.reference)).map((q) => ({
                  reference: q.reference,
                  courier: courier.name,
                  amountMinor: q.amountMinor
                })),
                problem: undefined
              }
        })),
        Effect.catch(() => Effect.succeed({ courier, quotes: [], problem: "failed" })),
        Effect.tap(({ problem }) =>
          problem === undefined
            ? Effect.void
            : Effect.logWarning("courier quote unavailable; its stops are estimated").pipe(
              Effect.annotateLogs({ courier: courier.name, problem })
            )
        )
      )
    }
    return {
      quote: (request) =>
        Effect.map(
          Effect.forEach(options.couriers, (courier) => ask(courier, request), { concurrency: "unbounded" }),
          (answers) => {
            const best = new Map<string, CourierPrice>()
            for (const answer of answers) {
              for (const q of answer.quotes) {
                const current = best.get(q.reference)
                if (current === undefined || q.amountMinor < current.amountMinor) {
                  best.set(q.reference, { courier: q.courier, amountMinor: q.amountMinor })
                }
              }
            }
            return best
          }
        )
    }
  })

/** The courier quote port backed by couriers' HTTP APIs (it replaces the rate-card default). */
export const layer = (options: HttpCourierOptions): Layer.Layer<never, never, HttpClient.HttpClient> =>
  Layer.effect(CourierQuotes, make(options))
