import { Effect, Option, Redacted, Schedule, Stream } from "effect"
import { HttpClient, type HttpClientError, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { Api } from "./Api.ts"

/**
 * The typed /v1 client for Effect programs: `HttpApiClient` over the API
 * definition, with the bearer token, an `Idempotency-Key` on every POST that
 * has none, and retries of transient failures (a lost connection, 429 with
 * its `Retry-After`, 500/502/503/504) that resend the same key, so a retried
 * create runs once. A PATCH is never retried: the server keeps no key for it.
 * See docs/decisions.md, "Client, examples and packaging".
 */
export interface ClientOptions {
  /** The server's base URL, e.g. `https://ops.example.com` (the client adds `/v1/...`). */
  readonly baseUrl: string | URL
  /** An API key, personal token or OAuth access token. */
  readonly token: string | Redacted.Redacted<string>
  /** Retries after the first attempt (default 2; 0 turns retrying off). */
  readonly maxRetries?: number | undefined
}

/** A request whose outcome is unknown after a failure can be sent again without doing the work twice. */
const retriable = (request: HttpClientRequest.HttpClientRequest) => request.method !== "PATCH"

/** Adds an `Idempotency-Key` once per call (before any retry) and retries the call with it. */
export const idempotentRetries = (maxRetries: number) => (client: HttpClient.HttpClient): HttpClient.HttpClient => {
  const retrying = maxRetries <= 0
    ? client
    : client.pipe(HttpClient.retryTransient({
      times: maxRetries,
      schedule: Schedule.exponential("250 millis", 2).pipe(Schedule.jittered)
    }))
  // The key is made here, outside the retried effect: `mapRequestEffect` would make a new one per attempt.
  return HttpClient.makeWith<never, never, HttpClientError.HttpClientError, never>(
    (request) =>
      Effect.flatMap(request, (r) => {
        const keyed = r.method === "POST" && r.headers["idempotency-key"] === undefined
          ? HttpClientRequest.setHeader(r, "idempotency-key", globalThis.crypto.randomUUID())
          : r
        return retriable(keyed) ? retrying.execute(keyed) : client.execute(keyed)
      }),
    (request) => Effect.succeed(request)
  )
}

/** The typed client of every /v1 operation (`client.locations.list(...)`); needs an `HttpClient` (e.g. `FetchHttpClient.layer`). */
export const makeClient = (options: ClientOptions) =>
  HttpApiClient.make(Api, {
    baseUrl: options.baseUrl,
    transformClient: (client) =>
      client.pipe(
        HttpClient.mapRequest(HttpClientRequest.bearerToken(
          typeof options.token === "string" ? options.token : Redacted.value(options.token)
        )),
        idempotentRetries(options.maxRetries ?? 2)
      )
  })

/** The client's type, as `makeClient` builds it. */
export type Client = Effect.Success<ReturnType<typeof makeClient>>

/**
 * Every item of a list, page after page, by keyset cursor: `fetchPage` gets
 * `undefined` first and then each page's `meta.nextCursor`.
 *
 *     paginate((cursor) => client.locations.list({ query: { perPage: 100, ...(cursor ? { cursor } : {}) } }))
 */
export const paginate = <A, E, R>(
  fetchPage: (cursor: string | undefined) => Effect.Effect<
    { readonly data: ReadonlyArray<A>; readonly meta: { readonly nextCursor: string | null } },
    E,
    R
  >
): Stream.Stream<A, E, R> =>
  Stream.paginate(undefined as string | undefined, (cursor) =>
    Effect.map(fetchPage(cursor), (page) => [page.data, Option.fromNullishOr(page.meta.nextCursor)] as const))
