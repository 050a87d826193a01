import { Duration, Effect, Layer, Option } from "effect"
import { FetchHttpClient } from "effect/http"
import { HttpCourierQuotes } from "@opsplatform/core"
import { HeavyTier } from "../api/rateLimit.ts"
import { CoreConfig } from "../config/Configuration.ts"

/**
 * Delivery-route settings, as configured: the heavy tier's requests per
 * minute per organization (`OPSPLATFORM_HEAVY_RATE_PER_MIN`), and the courier
 * quote APIs (`OPSPLATFORM_COURIERS`), which, when set, are asked live, the
 * rate card only estimating what they do not quote.
 */
export const RoutesConfigLive: Layer.Layer<never, never, CoreConfig> = Layer.unwrap(
  Effect.map(CoreConfig, ({ routes }) => {
    const tier = Layer.succeed(HeavyTier, { limit: routes.heavyPerMinute, windowSeconds: 60 })
    return Option.match(routes.couriers, {
      onNone: () => tier,
      onSome: (list) =>
        Layer.merge(
          tier,
          HttpCourierQuotes.layer({ couriers: list, timeout: Duration.millis(routes.courierTimeoutMs) }).pipe(
            Layer.provide(FetchHttpClient.layer)
          )
        )
    })
  })
)
