import { Config, Duration, Effect, Layer, Option, Schema } from "effect"
import { FetchHttpClient } from "effect/http"
import { HttpCourierQuotes } from "@opsplatform/core"
import { HeavyTier } from "../api/rateLimit.ts"

const PositiveInt = Schema.NumberFromString.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(1))

const Couriers = Schema.Array(Schema.Struct({
  name: Schema.String.check(Schema.isMinLength(1)),
  url: Schema.String.check(Schema.isPattern(/^https?:\/\//, { message: "must be an http(s) URL" })),
  token: Schema.optionalKey(Schema.String)
})).check(Schema.isMinLength(1))

/**
 * Delivery-route settings from the environment:
 * - `OPSPLATFORM_HEAVY_RATE_PER_MIN`: heavy-tier requests per minute per organization (default 30).
 * - `OPSPLATFORM_COURIERS`: JSON list of courier quote APIs `[{ "name", "url", "token"? }]`; when set,
 *   couriers are asked live and the rate card only estimates what they do not quote.
 * - `OPSPLATFORM_COURIER_TIMEOUT_MS`: how long a courier has to answer (default 2000).
 * A malformed value stops the server at start with the variable's name.
 */
export const RoutesConfigLive: Layer.Layer<never> = Layer.unwrap(
  Effect.gen(function*() {
    const perMinute = yield* Config.schema(PositiveInt, "OPSPLATFORM_HEAVY_RATE_PER_MIN").pipe(Config.withDefault(30))
    const couriers = yield* Config.option(Config.schema(Schema.fromJsonString(Couriers), "OPSPLATFORM_COURIERS"))
    const timeoutMs = yield* Config.schema(PositiveInt, "OPSPLATFORM_COURIER_TIMEOUT_MS").pipe(Config.withDefault(2000))
    const tier = Layer.succeed(HeavyTier, { limit: perMinute, windowSeconds: 60 })
    return Option.match(couriers, {
      onNone: () => tier,
      onSome: (list) =>
        Layer.merge(
          tier,
          HttpCourierQuotes.layer({ couriers: list, timeout: Duration.millis(timeoutMs) }).pipe(Layer.provide(FetchHttpClient.layer))
        )
    })
  }).pipe(Effect.orDie)
)
