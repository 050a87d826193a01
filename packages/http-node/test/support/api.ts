import { Effect, Layer } from "effect"
import type { SecureRandom } from "effect/crypto"
import {
  HttpClient,
  HttpClientRequest,
  HttpEffect,
  HttpRouter,
  HttpServer,
  HttpServerRequest,
  HttpServerResponse
} from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { type Fixture, makeFixture, MemoryCore } from "@opsplatform/testing"
import { expect } from "vitest"
import { Api } from "../../src/api/Api.ts"
import { NotFoundError } from "../../src/api/errors.ts"
import { ApiRoutes } from "../../src/server/app.ts"
import { apiMiddleware } from "../../src/server/middleware.ts"

/**
 * The real /v1 handlers and middleware (the routes `opsplatform serve` mounts,
 * behind the same request wrapper) over the memory core: no socket, no
 * database, so a handler test takes milliseconds. The SQL-backed suites
 * (`*.http.test.ts`) stay the contract tests of the real server.
 *
 * This is what `HttpApiTest` builds (an `HttpClient` that hands each request
 * to the routes in process), with the server's request wrapper in front, so
 * responses carry their request id and refusals their envelope; and its raw
 * client can send what the typed client refuses to encode (bad input, for 400s).
 */

const BASE_URL = "http://opsplatform.test"

/** An `HttpClient` whose requests are served in process by the /v1 routes, as the Node server serves them. */
const inProcessClient = Effect.gen(function*() {
  const routes = yield* HttpRouter.toHttpEffect(ApiRoutes)
  const context = yield* Effect.context<SecureRandom.SecureRandom>()
  return HttpClient.make((request) =>
    Effect.suspend(() => {
      let sent: HttpServerResponse.HttpServerResponse | undefined
      return HttpEffect.toHandled(routes, (_request, response) => Effect.sync(() => (sent = response)), apiMiddleware).pipe(
        Effect.provideService(HttpServerRequest.HttpServerRequest, HttpServerRequest.fromClientRequest(request)),
        Effect.map(() => HttpServerResponse.toClientResponse(sent!, { request }))
      )
    }).pipe(Effect.provideContext(context))
  ).pipe(HttpClient.mapRequest(HttpClientRequest.prependUrl(BASE_URL)))
})

/** The in-process client, the memory core it serves (to seed fixtures or read the store), and the platform services. */
export const ApiTestLayer = Layer.effect(HttpClient.HttpClient, inProcessClient).pipe(
  Layer.provideMerge(MemoryCore()),
  Layer.provideMerge(HttpServer.layerServices)
)

/** The typed client of the /v1 API, sending `token` as its bearer token. */
export const client = (token: string) =>
  Effect.flatMap(HttpClient.HttpClient, (http) =>
    HttpApiClient.makeWith(Api, {
      httpClient: http.pipe(HttpClient.mapRequest(HttpClientRequest.bearerToken(token)))
    }))

export interface RawResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  /** The parsed JSON body (undefined when the body is empty). */
  readonly json: any
}

/** A request as bytes on the wire: a JSON `body`, or a `rawBody` sent as it is. */
export const call = (
  method: "GET" | "POST" | "PATCH" | "DELETE",
  path: string,
  options: {
    readonly token?: string | undefined
    readonly body?: unknown
    readonly rawBody?: string
    readonly headers?: Record<string, string>
  } = {}
): Effect.Effect<RawResponse, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(method)(path).pipe(HttpClientRequest.setHeaders(options.headers ?? {}))
    if (options.token !== undefined) request = HttpClientRequest.bearerToken(request, options.token)
    if (options.rawBody !== undefined) {
      request = HttpClientRequest.bodyText(request, options.rawBody, options.headers?.["content-type"] ?? "application/json")
    } else if (options.body !== undefined) {
      request = HttpClientRequest.bodyJsonUnsafe(request, options.body)
    }
    const response = yield* http.execute(request)
    const text = yield* response.text
    return { status: response.status, headers: response.headers, json: text === "" ? undefined : JSON.parse(text) }
  }).pipe(Effect.orDie)

/** The typed client's failure for an unknown id, or an id of another organization or environment. */
export const expectNotFound = (error: unknown) => {
  expect(error).toBeInstanceOf(NotFoundError)
  expect((error as NotFoundError).error.code).toBe("not_found")
}

/** Clients that must not reach the owner's rows: another organization's, and the owner's other environment's. */
export const outsiders = (owner: Fixture) =>
  Effect.all([Effect.flatMap(makeFixture(), (stranger) => client(stranger.tokens.api)), client(owner.tokens.sandbox)])

/** The fields a response names, sorted, once it is checked to be a 400 `validation_failed` in the envelope. */
export const invalidFields = (response: RawResponse, label?: string): Array<string> => {
  expect(response.status, label).toBe(400)
  expect(response.json.data, label).toBeNull()
  expect(response.json.error.code, label).toBe("validation_failed")
  return response.json.error.details.map((d: { field: string }) => d.field).sort()
}
