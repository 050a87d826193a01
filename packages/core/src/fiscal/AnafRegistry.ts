import { Clock, Duration, Effect, Layer, Schedule, Schema, Semaphore } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { type RatePolicy, RateLimiter } from "../ratelimit/RateLimiter.ts"
import type { FiscalStatus } from "../contacts/model.ts"
import { parseAnafAnswer } from "./anaf.ts"
import { FiscalRegistry, type FiscalRegistryShape, RegistryUnavailable } from "./FiscalRegistry.ts"

/** Where ANAF answers about VAT payers, below the base address (`OPSPLATFORM_ANAF_URL`). */
export const ANAF_TVA_PATH = "/api/PlatitorTvaRest/v9/tva"
export const DEFAULT_ANAF_URL = "https://webservicesp.anaf.ro"

/** ANAF's published limits: at most 100 CUIs a request, at most one request a second. */
export const MAX_CUIS_PER_REQUEST = 100
export const ANAF_REQUESTS_PER_SECOND = 1
const RATE_KEY = "fiscal-registry:anaf"

/** The limit shared by every process on the database: `requestsPerSecond` requests in any one-second window. */
export const anafRate = (requestsPerSecond: number): RatePolicy => ({ name: "anaf", limit: requestsPerSecond, windowSeconds: 1 })

/**
 * The spacing of one process's own requests: the limit's interval plus a
 * tenth, since ANAF counts arrivals and a request can reach it faster than
 * the one before (1 100 ms at ANAF's one request a second).
 */
export const localSpacingMs = (requestsPerSecond: number) => Math.ceil(1100 / requestsPerSecond)

export interface AnafOptions {
  /** Base address, e.g. https://webservicesp.anaf.ro (the path is appended). */
  readonly url: string
  /** How long one request may take before it counts as failed (default 30 s). */
  readonly timeout?: Duration.Input | undefined
  /** Further attempts after a 5xx, a 429, a timeout or a connection error (default 3). */
  readonly retries?: number | undefined
  /** The first retry's delay; each next one doubles it (default 1 s). */
  readonly retryBase?: Duration.Input | undefined
  /** Requests a second the registry accepts (default ANAF's published 1). */
  readonly requestsPerSecond?: number | undefined
}

/** A failure worth another attempt. */
class Transient extends Schema.TaggedError<Transient>()("Transient", { reason: Schema.String }) {}

/**
 * The ANAF adapter of the fiscal registry. Requests carry at most 100 CUIs
 * and start at least a second apart across every process sharing the
 * database (the `RateLimiter` PostgreSQL layer, key `fiscal-registry:anaf`),
 * and `localSpacingMs` apart within one process. A 5xx, a 429, a timeout or
 * a connection error is retried with exponential backoff; anything else, or
 * the last retry failing, makes the lookup fail as `RegistryUnavailable`.
 */
export const make = (options: AnafOptions) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const limiter = yield* RateLimiter
    const endpoint = options.url.replace(/\/+$/, "") + ANAF_TVA_PATH
    const timeout = options.timeout ?? "30 seconds"
    const retries = options.retries ?? 3
    const requestsPerSecond = options.requestsPerSecond ?? ANAF_REQUESTS_PER_SECOND
    const rate = anafRate(requestsPerSecond)
    const spacingMs = localSpacingMs(requestsPerSecond)
    const pacing = yield* Semaphore.make(1)
    let lastStartMs = Number.NEGATIVE_INFINITY

    /** Waits for this request's turn: the process's own spacing, then a slot of the shared limit. */
    const turn = pacing.withPermits(1)(Effect.gen(function*() {
      for (;;) {
        const wait = lastStartMs + spacingMs - (yield* Clock.currentTimeMillis)
        if (wait > 0) {
          yield* Effect.sleep(Duration.millis(wait))
          continue
        }
        const decision = yield* limiter.consume(RATE_KEY, rate)
        if (decision.allowed) {
          lastStartMs = yield* Clock.currentTimeMillis
          return
        }
        yield* Effect.sleep(Duration.millis(Math.min(decision.resetSeconds * 1000, 250)))
      }
    }))

    const attempt = (cuis: ReadonlyArray<string>, date: string) =>
      Effect.gen(function*() {
        yield* turn
        const request = HttpClientRequest.post(endpoint).pipe(
          HttpClientRequest.acceptJson,
          HttpClientRequest.bodyJsonUnsafe(cuis.map((cui) => ({ cui: Number(cui), data: date })))
        )
        const response = yield* client.execute(request).pipe(
          Effect.timeout(timeout),
          Effect.catchTag("TimeoutError", () => Effect.fail(new Transient({ reason: "timed out" }))),
          Effect.catchTag("HttpClientError", (e) => Effect.fail(new Transient({ reason: e.message })))
        )
        if (response.status === 429 || response.status >= 500) {
          return yield* new Transient({ reason: `HTTP ${response.status}` })
        }
        if (response.status !== 200) return yield* new RegistryUnavailable({ reason: `HTTP ${response.status}` })
        const body = yield* response.json.pipe(
          Effect.timeout(timeout),
          Effect.catch(() => Effect.fail(new RegistryUnavailable({ reason: "the answer is not JSON" })))
        )
        const answer = parseAnafAnswer(body)
        return "problem" in answer ? yield* new RegistryUnavailable({ reason: answer.problem }) : answer
      }).pipe(
        Effect.retry({ schedule: Schedule.exponential(options.retryBase ?? "1 second"), times: retries, while: (e) => e._tag === "Transient" }),
        Effect.catchTag("Transient", (e) =>
          Effect.fail(new RegistryUnavailable({ reason: `${e.reason} (${retries + 1} attempts)` })))
      )

    return {
      lookup: Effect.fn("AnafRegistry.lookup")(function*(cuis, date) {
        const unique = [...new Set(cuis)]
        const found = new Map<string, FiscalStatus>()
        const notFound = new Set<string>()
        for (let i = 0; i < unique.length; i += MAX_CUIS_PER_REQUEST) {
          const answer = yield* attempt(unique.slice(i, i + MAX_CUIS_PER_REQUEST), date)
          for (const [cui, status] of answer.found) found.set(cui, status)
          for (const cui of answer.notFound) notFound.add(cui)
        }
        return { found, notFound }
      })
    } satisfies FiscalRegistryShape
  })

/** The fiscal registry backed by ANAF (it replaces the unconfigured default). */
export const layer = (options: AnafOptions): Layer.Layer<never, never, HttpClient.HttpClient | RateLimiter> =>
  Layer.effect(FiscalRegistry, make(options))
