import { Effect, Layer } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiMiddleware } from "effect/http-api"
import { Errors } from "@opsplatform/core"
import { BadRequestError, fromDomain } from "./errors.ts"

/**
 * Refuses query parameters on operations that define none, as every other
 * unknown field is refused (docs/decisions.md, "Unknown fields are refused"):
 * the API's query decoding only runs where a query schema exists.
 */
export class StrictQuery extends HttpApiMiddleware.Service<StrictQuery>()("@opsplatform/http-node/StrictQuery", {
  error: BadRequestError
}) {}

export const StrictQueryLive: Layer.Layer<StrictQuery> = Layer.succeed(
  StrictQuery,
  StrictQuery.of((httpEffect, { endpoint }) =>
    Effect.gen(function*() {
      if (endpoint.query !== undefined) return yield* httpEffect
      const request = yield* HttpServerRequest.HttpServerRequest
      const search = request.url.includes("?") ? request.url.slice(request.url.indexOf("?") + 1) : ""
      const names = [...new Set([...new URLSearchParams(search).keys()])]
      if (names.length === 0) return yield* httpEffect
      const refused = new Errors.ValidationFailed({
        details: names.map((field) => ({ field, issue: "is not a field of this request" }))
      })
      return yield* Effect.flatMap(fromDomain(refused), Effect.fail)
    }))
)
