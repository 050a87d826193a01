/**
 * Retries with `Idempotency-Key`. A call that failed without an answer, or
 * with an answer that says "not now" (429, 502, 503, 504) or "failed inside"
 * (500, whose transaction rolled back), is sent again, up to `maxRetries`
 * times, after an exponential, jittered wait (429 and 503 wait as long as
 * `Retry-After` says, up to a minute). A POST gets an `Idempotency-Key` once,
 * before the first attempt, and every retry sends the same key: the server
 * runs the request once and answers a retry with the stored response. GET,
 * PUT and DELETE are idempotent by themselves. A PATCH is retried only on
 * 429, which the server answers before doing anything. See docs/decisions.md,
 * "Client, examples and packaging".
 */

export interface RetryOptions {
  /** Retries after the first attempt (default 2; 0 turns retrying off). */
  readonly maxRetries?: number | undefined
  /** The first wait in milliseconds, doubled each retry (default 300). */
  readonly retryDelayMs?: number | undefined
  /** The longest `Retry-After` worth waiting for in milliseconds (default 60 000); a longer one is thrown. */
  readonly maxRetryAfterMs?: number | undefined
}

const AMBIGUOUS = new Set([500, 502, 503, 504])

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const retryAfterMs = (response: Response): number | undefined => {
  const header = response.headers.get("retry-after")
  if (header === null) return undefined
  const seconds = Number(header)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const date = Date.parse(header)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}

/** A `fetch` that adds the key and retries as described above. */
export const retryingFetch = (
  fetchImpl: (request: Request) => Promise<Response>,
  options: RetryOptions = {}
) => async (input: Request): Promise<Response> => {
  const maxRetries = options.maxRetries ?? 2
  const baseDelay = options.retryDelayMs ?? 300
  const maxRetryAfter = options.maxRetryAfterMs ?? 60_000
  let request = input
  if (request.method === "POST" && !request.headers.has("idempotency-key")) {
    const headers = new Headers(request.headers)
    headers.set("idempotency-key", globalThis.crypto.randomUUID())
    request = new Request(request, { headers })
  }
  const safeWhenUnknown = request.method !== "PATCH"
  const backoff = (attempt: number) => baseDelay * 2 ** attempt * (0.5 + Math.random() / 2)
  for (let attempt = 0; ; attempt++) {
    const last = attempt >= maxRetries
    let response: Response
    try {
      response = await fetchImpl(request.clone())
    } catch (error) {
      if (last || !safeWhenUnknown) throw error
      await sleep(backoff(attempt))
      continue
    }
    const retriable = response.status === 429 || (safeWhenUnknown && AMBIGUOUS.has(response.status))
    if (last || !retriable) return response
    const wait = response.status === 429 || response.status === 503 ? retryAfterMs(response) : undefined
    if (wait !== undefined && wait > maxRetryAfter) return response
    await response.body?.cancel()
    await sleep(wait ?? backoff(attempt))
  }
}
