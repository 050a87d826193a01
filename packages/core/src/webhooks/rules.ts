import { transitionTable } from "../shared/transitions.ts"
import { DeliveryStatus } from "./model.ts"

/**
 * The delivery rules as pure functions: the retry schedule with jitter and
 * Retry-After, how an answer is judged, the state moves, and redeliver.
 */

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

/** Delays after attempts 1..7 (docs/decisions.md, "Design: events and webhooks"): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h — 8 attempts in all. */
export const defaultSchedule: ReadonlyArray<number> = [
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  10 * HOUR
]

/** The attempt budget a schedule gives: one first attempt and one per delay. */
export const attemptBudget = (schedule: ReadonlyArray<number>): number => schedule.length + 1

export const JITTER = 0.2

/** `delay` moved by up to ±20 %, `random` in [0, 1) choosing where. */
export const withJitter = (delay: number, random: number): number => Math.round(delay * (1 - JITTER + 2 * JITTER * random))

/** Statuses whose Retry-After the schedule honours. */
export const honoursRetryAfter = (status: number): boolean => status === 429 || status === 503

/**
 * `Retry-After` as milliseconds from `nowMs`: delay-seconds or an HTTP date.
 * Anything else (absent, negative, unparsable) is undefined.
 */
export const parseRetryAfter = (value: string | undefined, nowMs: number): number | undefined => {
  if (value === undefined) return undefined
  const text = value.trim()
  if (/^\d+$/.test(text)) return Number(text) * SECOND
  if (!/[a-z]/i.test(text)) return undefined
  const at = Date.parse(text)
  if (Number.isNaN(at)) return undefined
  return Math.max(0, at - nowMs)
}

/**
 * How long to wait after attempt `attempt` (1-based) before the next, or
 * undefined when the budget is spent. A receiver's Retry-After on 429/503 is
 * honoured within [delay, 2×delay]: it can slow the schedule down, never speed
 * it up, and never stall it for more than twice the planned wait.
 */
export const nextDelay = (options: {
  readonly attempt: number
  readonly schedule: ReadonlyArray<number>
  readonly random: number
  readonly status?: number | null | undefined
  readonly retryAfterMs?: number | undefined
}): number | undefined => {
  const base = options.schedule[options.attempt - 1]
  if (base === undefined) return undefined
  const delay = withJitter(base, options.random)
  if (options.status != null && honoursRetryAfter(options.status) && options.retryAfterMs !== undefined) {
    return Math.min(Math.max(options.retryAfterMs, delay), 2 * delay)
  }
  return delay
}

/** How an attempt ended, from the transport's point of view. */
export type AttemptResult =
  | { readonly _tag: "Answered"; readonly status: number; readonly retryAfterMs?: number | undefined }
  | { readonly _tag: "NotAnswered"; readonly error: string }

export type Verdict = "succeeded" | "retry" | "gone"

/** 2xx is success; 410 means the endpoint is gone; anything else (3xx included: redirects are not followed) is retried. */
export const judge = (result: AttemptResult): Verdict => {
  if (result._tag === "NotAnswered") return "retry"
  if (result.status >= 200 && result.status < 300) return "succeeded"
  if (result.status === 410) return "gone"
  return "retry"
}

/** Where a delivery goes after an attempt: the next state and, when it will retry, after how long. */
export const afterAttempt = (options: {
  readonly result: AttemptResult
  /** Attempts used of the budget, this one included. */
  readonly attemptsUsed: number
  readonly schedule: ReadonlyArray<number>
  readonly random: number
}): { readonly status: "succeeded" | "failed" | "dead"; readonly delayMs: number | undefined } => {
  const verdict = judge(options.result)
  if (verdict === "succeeded") return { status: "succeeded", delayMs: undefined }
  if (verdict === "gone") return { status: "dead", delayMs: undefined }
  const delayMs = nextDelay({
    attempt: options.attemptsUsed,
    schedule: options.schedule,
    random: options.random,
    status: options.result._tag === "Answered" ? options.result.status : undefined,
    retryAfterMs: options.result._tag === "Answered" ? options.result.retryAfterMs : undefined
  })
  return delayMs === undefined ? { status: "dead", delayMs: undefined } : { status: "failed", delayMs }
}

/**
 * The lifecycle of a delivery. A worker claims a pending or failed delivery,
 * or takes over a `sending` one whose lease ran out; redeliver moves a
 * finished one back to `pending`.
 */
export const deliveryLifecycle = transitionTable(DeliveryStatus.literals, {
  claim: { from: ["pending", "failed", "sending"], to: "sending" },
  succeed: { from: ["sending"], to: "succeeded" },
  fail: { from: ["sending"], to: "failed" },
  exhaust: { from: ["sending"], to: "dead" },
  redeliver: { from: ["failed", "dead", "succeeded"], to: "pending" }
})

export const canMove = deliveryLifecycle.can

export type RedeliverDecision =
  | { readonly _tag: "Reset" }
  | { readonly _tag: "Refuse"; readonly reason: string }

/**
 * Redeliver (spec: POST /webhooks/{id}/deliveries/{deliveryId}/redeliver):
 * failed or dead → budget reset, due now; succeeded only with `force`;
 * pending → due now (it has not been attempted in this budget, so nothing
 * resets); sending → refused while the attempt is in flight.
 */
export const redeliverDecision = (status: DeliveryStatus, force: boolean): RedeliverDecision => {
  switch (status) {
    case "failed":
    case "dead":
    case "pending":
      return { _tag: "Reset" }
    case "succeeded":
      return force
        ? { _tag: "Reset" }
        : { _tag: "Refuse", reason: "This delivery already succeeded; send force: true to deliver it again" }
    case "sending":
      return { _tag: "Refuse", reason: "An attempt of this delivery is in flight; redeliver once it is recorded" }
  }
}

// ---- Portal sessions --------------------------------------------------------------

/** Why a portal link does not open: never seen, already opened once, past its time, or ended by its organization. */
export type PortalLinkRefusal = "unknown" | "used" | "expired" | "revoked"

interface PortalSessionTimes {
  readonly expires_at: string
  readonly exchanged_at: string | null
  readonly revoked_at: string | null
}

/** Why a link that could not be claimed was refused; revocation and expiry say more than "used". */
export const portalLinkRefusal = (session: PortalSessionTimes | undefined, nowMs: number): PortalLinkRefusal =>
  session === undefined
    ? "unknown"
    : session.revoked_at !== null
    ? "revoked"
    : Date.parse(session.expires_at) <= nowMs
    ? "expired"
    : "used"

/** Whether an opened session still admits its browser. */
export const portalSessionActive = (session: PortalSessionTimes, nowMs: number): boolean =>
  session.exchanged_at !== null && session.revoked_at === null && Date.parse(session.expires_at) > nowMs

/** What a portal session may do, in the API's scopes: read always, write unless it is read-only. */
export const portalScopes = (session: { readonly read_only: boolean }): ReadonlyArray<"webhooks:read" | "webhooks:write"> =>
  session.read_only ? ["webhooks:read"] : ["webhooks:read", "webhooks:write"]

/** The types among `wanted` a session limited to `allowed` may not subscribe to (none when it is not limited). */
export const typesOutsidePortal = (allowed: ReadonlyArray<string> | null, wanted: ReadonlyArray<string>): ReadonlyArray<string> =>
  allowed === null ? [] : wanted.filter((t) => !allowed.includes(t))
