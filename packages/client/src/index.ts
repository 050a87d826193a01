/**
 * `@opsplatform/client`: the Operations Platform /v1 API over `fetch`, typed
 * from the server's OpenAPI document (openapi-typescript's types, called
 * through openapi-fetch). Calls return the envelope's `data` and throw an
 * `ApiError` of the status's class; lists can be walked page by page by
 * cursor; POSTs carry an `Idempotency-Key` kept across retries.
 */
import createFetchClient, { type Client as FetchClient, type MaybeOptionalInit } from "openapi-fetch"
import type { PathsWithMethod, RequiredKeysOf, ResponseObjectMap, SuccessResponse } from "openapi-typescript-helpers"
import { ConnectionError, errorFromResponse } from "./errors.ts"
import type { paths } from "./openapi.ts"
import { type RetryOptions, retryingFetch } from "./retry.ts"

export * from "./errors.ts"
export type { components, operations, paths } from "./openapi.ts"
export type { RetryOptions } from "./retry.ts"

type Method = "get" | "put" | "post" | "delete" | "patch"

/** The parsed body of an operation's success response. */
type SuccessBody<Operation> = ResponseObjectMap<Operation> extends infer R extends Record<string | number, any>
  ? SuccessResponse<R, "application/json">
  : never

/** What a call returns: the envelope's `data`. */
export type Data<Path extends keyof paths, M extends Method> = SuccessBody<paths[Path][M]> extends { data: infer D } ? D
  : never

/** The second argument of a call: `params` (`path`, `query`) and `body`, required when the operation requires them. */
export type Init<Path extends keyof paths, M extends Method> = MaybeOptionalInit<paths[Path], M>

type InitArgs<I> = RequiredKeysOf<I> extends never ? [init?: I] : [init: I]

/** The paths whose GET answers a page: `{ data: [...], meta: { nextCursor } }`. */
export type ListPath = {
  [P in PathsWithMethod<paths, "get">]: SuccessBody<paths[P]["get"]> extends
    { data: ReadonlyArray<unknown>; meta: { nextCursor: string | null } } ? P : never
}[PathsWithMethod<paths, "get">]

/** One page of a list, as the envelope carries it. */
export interface Page<Item> {
  readonly data: ReadonlyArray<Item>
  readonly meta: {
    readonly page: number
    readonly perPage: number
    readonly total: number
    readonly totalPages: number
    readonly nextCursor: string | null
    /** Present when the list holds more than 10 000 rows: `total` is then the server's estimate. */
    readonly totalEstimated?: true
  }
}

export type Item<Path extends ListPath> = Data<Path, "get"> extends ReadonlyArray<infer I> ? I : never

export interface ClientOptions extends RetryOptions {
  /** The server's base URL, e.g. `https://ops.example.com` (paths start with `/v1`). */
  readonly baseUrl: string
  /**
   * An API key, personal token or OAuth access token; or a function that
   * returns the current one (an OAuth app refreshing its access token).
   */
  readonly token: string | (() => string | Promise<string>)
  /** The `fetch` to send requests with (default `globalThis.fetch`). */
  readonly fetch?: ((request: Request) => Promise<Response>) | undefined
  /** Headers sent with every request, e.g. `Opsplatform-Organization`. */
  readonly headers?: Record<string, string> | undefined
}

type Call<M extends Method> = <Path extends PathsWithMethod<paths, M>>(
  path: Path,
  ...init: InitArgs<Init<Path, M>>
) => Promise<Data<Path, M>>

export interface OpsplatformClient {
  readonly get: Call<"get">
  readonly post: Call<"post">
  readonly put: Call<"put">
  readonly patch: Call<"patch">
  readonly delete: Call<"delete">
  /** Every page of a list, by keyset cursor, starting from the query given (its `page` is ignored). */
  readonly pages: <Path extends ListPath>(path: Path, ...init: InitArgs<Init<Path, "get">>) => AsyncIterableIterator<Page<Item<Path>>>
  /** Every item of a list, page after page. */
  readonly list: <Path extends ListPath>(path: Path, ...init: InitArgs<Init<Path, "get">>) => AsyncIterableIterator<Item<Path>>
  /** The openapi-fetch client underneath: whole envelopes, `{ data, error, response }`, nothing thrown. */
  readonly raw: FetchClient<paths, "application/json">
}

const methods = { get: "GET", put: "PUT", post: "POST", delete: "DELETE", patch: "PATCH" } as const

export const createClient = (options: ClientOptions): OpsplatformClient => {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request))
  const connectionAware = async (request: Request) => {
    try {
      return await send(request)
    } catch (error) {
      throw new ConnectionError(`${request.method} ${new URL(request.url).pathname} got no answer: ${String((error as Error)?.message ?? error)}`, { cause: error })
    }
  }
  const raw = createFetchClient<paths, "application/json">({
    baseUrl: options.baseUrl.replace(/(?<!\/)\/+$/, ""),
    fetch: retryingFetch(connectionAware, options),
    ...(options.headers === undefined ? {} : { headers: options.headers })
  })
  raw.use({
    onRequest: async ({ request }) => {
      const token = typeof options.token === "function" ? await options.token() : options.token
      request.headers.set("authorization", `Bearer ${token}`)
      return request
    }
  })

  const call = async (method: Method, path: string, init: unknown): Promise<unknown> => {
    const { data, error, response } = await (raw.request as (m: string, p: string, i: unknown) => Promise<
      { data?: { data: unknown }; error?: unknown; response: Response }
    >)(methods[method], path, init ?? {})
    if (error !== undefined || !response.ok) throw errorFromResponse(response, error)
    return data?.data
  }

  async function* pages(path: string, init?: { params?: { query?: Record<string, unknown> } }) {
    const { page: _ignored, ...query } = init?.params?.query ?? {}
    let cursor: string | undefined
    do {
      const { data, error, response } = await (raw.GET as (p: string, i: unknown) => Promise<
        { data?: Page<unknown>; error?: unknown; response: Response }
      >)(path, { ...init, params: { ...init?.params, query: cursor === undefined ? query : { ...query, cursor } } })
      if (error !== undefined || data === undefined) throw errorFromResponse(response, error)
      yield data
      cursor = data.meta.nextCursor ?? undefined
    } while (cursor !== undefined)
  }

  async function* list(path: string, init?: { params?: { query?: Record<string, unknown> } }) {
    for await (const page of pages(path, init)) yield* page.data
  }

  return {
    get: ((path: string, init?: unknown) => call("get", path, init)) as Call<"get">,
    post: ((path: string, init?: unknown) => call("post", path, init)) as Call<"post">,
    put: ((path: string, init?: unknown) => call("put", path, init)) as Call<"put">,
    patch: ((path: string, init?: unknown) => call("patch", path, init)) as Call<"patch">,
    delete: ((path: string, init?: unknown) => call("delete", path, init)) as Call<"delete">,
    pages: pages as OpsplatformClient["pages"],
    list: list as OpsplatformClient["list"],
    raw
  }
}
