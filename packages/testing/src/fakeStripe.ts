import { randomBytes } from "node:crypto"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * Stripe's meter event endpoint on loopback, for tests and demos: `POST
 * /v1/billing/meter_events`, form-encoded, with Stripe's rules as documented
 * (docs/decisions.md, "Usage metering"): a secret key as the bearer, whole
 * number values, a timestamp within the past 35 days and at most 5 minutes
 * ahead, an identifier (at most 100 characters) refused the second time with
 * a 400 `invalid_request_error` ("An event already exists with identifier
 * …") and `Stripe-Should-Retry: false`, and `Idempotency-Key` replays. It
 * also counts calls for one customer and meter that overlap, which Stripe
 * does not allow, and answers them 429. Faults (an error answer, a dropped
 * connection before or after the event is recorded) are injected per
 * customer. Node only.
 */

export interface FakeMeterEvent {
  readonly identifier: string
  readonly event_name: string
  readonly customer: string
  /** As sent: a whole number in decimal. */
  readonly value: string
  /** Unix seconds. */
  readonly timestamp: number
  readonly livemode: boolean
  readonly created: number
}

export interface FakeStripeRequest {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  /** The form fields as sent, brackets and all (`payload[value]`). */
  readonly form: Readonly<Record<string, string>>
  /** What the fake answered; null when it dropped the connection. */
  readonly status: number | null
}

export type FakeStripeFault =
  | {
    readonly status: number
    readonly type?: string | undefined
    readonly code?: string | undefined
    readonly message?: string | undefined
    /** Seconds, sent as `Retry-After`. */
    readonly retryAfter?: number | undefined
  }
  /** Close the connection without answering, before the event is recorded or after. */
  | { readonly drop: "before" | "after" }

export interface FakeStripeOptions {
  /** The secret keys it accepts; `sk_live_…` keys are live mode, the others test mode. */
  readonly apiKeys: ReadonlyArray<string>
  /** How long each meter event call takes before its answer (default 0). */
  readonly delayMs?: number | undefined
  /** The fake's clock, for the timestamp window (default the real one). */
  readonly now?: (() => number) | undefined
}

export interface FakeStripe {
  readonly url: string
  readonly port: number
  /** Meter events accepted, in order. */
  readonly events: ReadonlyArray<FakeMeterEvent>
  /** Every request, in order of arrival. */
  readonly requests: ReadonlyArray<FakeStripeRequest>
  /** Calls that arrived while another call for the same customer and meter was under way. */
  readonly overlaps: () => number
  /** The next `times` calls (for `customer`, or any) meet `fault` instead of their normal answer. */
  readonly fail: (fault: FakeStripeFault, options?: { readonly times?: number; readonly customer?: string }) => void
  /** Faults injected and not met yet. */
  readonly pendingFaults: () => number
  readonly setDelay: (ms: number) => void
  readonly close: () => Promise<void>
}

const PAST_SECONDS = 35 * 24 * 3600
const FUTURE_SECONDS = 5 * 60

interface StripeErrorBody {
  readonly type: string
  readonly message: string
  readonly code?: string | undefined
  readonly param?: string | undefined
}

export const startFakeStripe = async (options: FakeStripeOptions): Promise<FakeStripe> => {
  const events: Array<FakeMeterEvent> = []
  const requests: Array<FakeStripeRequest> = []
  const faults: Array<{ fault: FakeStripeFault; customer: string | undefined; left: number }> = []
  const idempotent = new Map<string, { readonly form: string; readonly status: number; readonly body: string }>()
  const inFlight = new Map<string, number>()
  let overlaps = 0
  let delayMs = options.delayMs ?? 0
  const now = options.now ?? Date.now
  const requestId = () => `req_${randomBytes(7).toString("hex")}`

  const takeFault = (customer: string | undefined) => {
    const i = faults.findIndex((f) => f.customer === undefined || f.customer === customer)
    if (i < 0) return undefined
    const found = faults[i]!
    found.left -= 1
    if (found.left <= 0) faults.splice(i, 1)
    return found.fault
  }

  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      const form: Record<string, string> = {}
      for (const [k, v] of new URLSearchParams(text)) form[k] = v
      const path = (req.url ?? "/").split("?")[0]!
      const logged = { method: req.method ?? "", path, headers: req.headers, form, status: null as number | null }
      requests.push(logged)
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        logged.status = status
        res.writeHead(status, {
          "content-type": "application/json",
          "request-id": requestId(),
          ...(req.headers["stripe-version"] ? { "stripe-version": String(req.headers["stripe-version"]) } : {}),
          ...headers
        })
        res.end(typeof body === "string" ? body : JSON.stringify(body))
      }
      const refuse = (status: number, error: StripeErrorBody, headers: Record<string, string> = {}) =>
        send(status, { error }, headers)

      const auth = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ""))
      const key = auth?.[1]
      if (key === undefined || !options.apiKeys.includes(key)) {
        return refuse(401, {
          type: "invalid_request_error",
          message: `Invalid API Key provided: ${key === undefined ? "none" : `${key.slice(0, 8)}****${key.slice(-4)}`}`
        })
      }
      if (req.method !== "POST" || path !== "/v1/billing/meter_events") {
        return refuse(404, { type: "invalid_request_error", message: `Unrecognized request URL (${req.method}: ${path}).` })
      }
      if (!String(req.headers["content-type"] ?? "").startsWith("application/x-www-form-urlencoded")) {
        return refuse(400, { type: "invalid_request_error", message: "Invalid request: the body must be form-encoded" })
      }
      const livemode = key.startsWith("sk_live_") || key.startsWith("rk_live_")
      const idempotencyKey = req.headers["idempotency-key"] === undefined ? undefined : `${key}\n${req.headers["idempotency-key"]}`
      const customer = form["payload[stripe_customer_id]"]
      const eventName = form.event_name
      const stream = `${livemode}\n${customer}\n${eventName}`
      const busy = (inFlight.get(stream) ?? 0) > 0
      if (busy) overlaps += 1
      inFlight.set(stream, (inFlight.get(stream) ?? 0) + 1)
      const done = () => inFlight.set(stream, (inFlight.get(stream) ?? 1) - 1)

      const answer = () => {
        done()
        if (busy) {
          return refuse(429, {
            type: "invalid_request_error",
            code: "rate_limit",
            message: "Too many concurrent requests for this customer and meter: one at a time"
          })
        }
        const fault = takeFault(customer)
        if (fault !== undefined && "status" in fault) {
          return refuse(fault.status, {
            type: fault.type ?? (fault.status >= 500 ? "api_error" : "invalid_request_error"),
            code: fault.code,
            message: fault.message ?? `Injected failure (${fault.status})`
          }, fault.retryAfter === undefined ? {} : { "retry-after": String(fault.retryAfter) })
        }
        if (fault !== undefined && fault.drop === "before") {
          logged.status = null
          return req.socket.destroy()
        }
        // An idempotency key already used replays its first answer (Stripe saves it once the endpoint ran).
        const saved = idempotencyKey === undefined ? undefined : idempotent.get(idempotencyKey)
        let outcome: { readonly status: number; readonly body: string; readonly headers: Record<string, string> }
        if (saved !== undefined) {
          outcome = saved.form === text
            ? { status: saved.status, body: saved.body, headers: { "idempotent-replayed": "true" } }
            : {
              status: 400,
              body: JSON.stringify({
                error: {
                  type: "idempotency_error",
                  message: "Keys for idempotent requests can only be used with the same parameters they were first used with."
                }
              }),
              headers: {}
            }
        } else {
          const result = meterEvent(form, livemode)
          if (result.status === 200 && result.event !== undefined) events.push(result.event)
          outcome = { status: result.status, body: JSON.stringify(result.body), headers: result.headers ?? {} }
          if (idempotencyKey !== undefined) idempotent.set(idempotencyKey, { form: text, status: outcome.status, body: outcome.body })
        }
        if (fault !== undefined && fault.drop === "after") {
          logged.status = null
          return req.socket.destroy()
        }
        send(outcome.status, outcome.body, outcome.headers)
      }
      if (delayMs > 0) setTimeout(answer, delayMs)
      else answer()
    })
  })

  /** Stripe's checks of one meter event, in the order it makes them. */
  const meterEvent = (form: Record<string, string>, livemode: boolean): {
    readonly status: number
    readonly body: unknown
    readonly headers?: Record<string, string>
    readonly event?: FakeMeterEvent
  } => {
    const invalid = (message: string, param?: string, headers: Record<string, string> = {}) => ({
      status: 400,
      body: { error: { type: "invalid_request_error", message, ...(param ? { param } : {}) } },
      headers
    })
    for (const param of ["event_name", "payload[stripe_customer_id]", "payload[value]"]) {
      if (form[param] === undefined || form[param] === "") return invalid(`Missing required param: ${param}.`, param)
    }
    if (form.event_name!.length > 100) return invalid("event_name must be at most 100 characters.", "event_name")
    if (!/^-?\d+$/.test(form["payload[value]"]!)) return invalid("The value must be a whole number.", "payload[value]")
    const nowSeconds = Math.floor(now() / 1000)
    let timestamp = nowSeconds
    if (form.timestamp !== undefined) {
      if (!/^\d+$/.test(form.timestamp)) return invalid("Invalid integer: " + form.timestamp, "timestamp")
      timestamp = Number(form.timestamp)
      if (timestamp < nowSeconds - PAST_SECONDS || timestamp > nowSeconds + FUTURE_SECONDS) {
        return invalid("Timestamp must be within the past 35 calendar days and at most 5 minutes in the future.", "timestamp")
      }
    }
    const identifier = form.identifier ?? `fake_${randomBytes(12).toString("hex")}`
    if (identifier.length > 100) return invalid("identifier must be at most 100 characters.", "identifier")
    if (events.some((e) => e.identifier === identifier && e.livemode === livemode)) {
      return invalid(`An event already exists with identifier ${identifier}.`, undefined, { "stripe-should-retry": "false" })
    }
    const event: FakeMeterEvent = {
      identifier,
      event_name: form.event_name!,
      customer: form["payload[stripe_customer_id]"]!,
      value: form["payload[value]"]!,
      timestamp,
      livemode,
      created: nowSeconds
    }
    return {
      status: 200,
      event,
      body: {
        object: "billing.meter_event",
        created: event.created,
        event_name: event.event_name,
        identifier,
        livemode,
        payload: { stripe_customer_id: event.customer, value: event.value },
        timestamp
      }
    }
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    events,
    requests,
    overlaps: () => overlaps,
    fail: (fault, o) => void faults.push({ fault, customer: o?.customer, left: o?.times ?? 1 }),
    pendingFaults: () => faults.reduce((n, f) => n + f.left, 0),
    setDelay: (ms) => {
      delayMs = ms
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
