import { transitionTable } from "../shared/transitions.ts"
import type { ForwardingStatus, StoredUsage, SubscriptionStatus, UsageReport } from "./model.ts"

/**
 * The metering rules as pure functions: a subscription's lifecycle, the window
 * a usage timestamp must fall in, what makes a retry differ, and how each
 * answer of the processor moves a usage record's forwarding.
 */

const SECOND = 1000
const MINUTE = 60 * SECOND
const DAY = 24 * 60 * MINUTE

export const subscriptionStatuses: ReadonlyArray<SubscriptionStatus> = ["active", "paused", "cancelled"]

export const subscriptionLifecycle = transitionTable(subscriptionStatuses, {
  pause: { from: ["active"], to: "paused" },
  resume: { from: ["paused"], to: "active" },
  cancel: { from: ["active", "paused"], to: "cancelled" }
})

/** How far back and ahead a usage timestamp may lie (Stripe: 35 days back, 5 minutes ahead). */
export const USAGE_PAST_MS = 35 * DAY
export const USAGE_FUTURE_MS = 5 * MINUTE

/** The instants a usage timestamp may take when reported at `nowMs`, inclusive. */
export const usageWindow = (nowMs: number): { readonly fromMs: number; readonly toMs: number } => ({
  fromMs: nowMs - USAGE_PAST_MS,
  toMs: nowMs + USAGE_FUTURE_MS
})

export const inUsageWindow = (timestampMs: number, nowMs: number): boolean => {
  const { fromMs, toMs } = usageWindow(nowMs)
  return timestampMs >= fromMs && timestampMs <= toMs
}

/** The issue a timestamp outside the window gets, naming the window at `nowMs`. */
export const usageWindowIssue = (nowMs: number): string => {
  const { fromMs, toMs } = usageWindow(nowMs)
  return `must be within the last 35 days and at most 5 minutes ahead: between ${new Date(fromMs).toISOString()} ` +
    `and ${new Date(toMs).toISOString()}`
}

/** A reported instant as stored: UTC, millisecond precision. */
export const normalizedInstant = (instant: string): string => new Date(Date.parse(instant)).toISOString()

/**
 * Whether a retry under a recorded identifier says something else than the
 * record: another quantity, or a timestamp that is another instant. A retry
 * without a timestamp agrees with the one resolved at first acceptance.
 */
export const retryDiffers = (stored: Pick<StoredUsage, "quantity" | "timestamp">, retry: UsageReport): boolean =>
  retry.quantity !== stored.quantity ||
  (retry.timestamp !== undefined && Date.parse(retry.timestamp) !== Date.parse(stored.timestamp))

/** The meter event's timestamp: Unix seconds. */
export const unixSeconds = (iso: string): number => Math.floor(Date.parse(iso) / SECOND)

/** What the processor answered one call (the `PaymentProcessor` port's outcome). */
export type CallResult =
  | { readonly _tag: "Accepted" }
  /** The processor already holds an event with this identifier: an earlier call got through. */
  | { readonly _tag: "AlreadyRecorded"; readonly message: string }
  /** Refused for good (a 400 other than the duplicate identifier). */
  | { readonly _tag: "Refused"; readonly status: number; readonly message: string }
  /** Not handled this time: rate limited, a server error, no answer, a credential problem. */
  | {
    readonly _tag: "Unavailable"
    readonly status: number | null
    readonly message: string
    readonly retryAfterMs?: number | undefined
  }

/** A call's outcome as the metrics name it (a short fixed set). */
export const callOutcome = (result: CallResult): "accepted" | "already_recorded" | "refused" | "unavailable" => {
  switch (result._tag) {
    case "Accepted":
      return "accepted"
    case "AlreadyRecorded":
      return "already_recorded"
    case "Refused":
      return "refused"
    case "Unavailable":
      return "unavailable"
  }
}

export interface RetryPolicy {
  /** The wait after the first failed call; each further failure doubles it. */
  readonly baseMs: number
  /** The longest wait between two calls. */
  readonly maxMs: number
}

/**
 * The wait after `failures` failed calls in a row (1-based): exponential from
 * `baseMs`, capped at `maxMs`, with equal jitter (between half and all of
 * it, `random` in [0, 1) choosing where), so callers that failed together do
 * not retry together. A processor's Retry-After lengthens it, up to `maxMs`.
 */
export const retryDelay = (policy: RetryPolicy, failures: number, random: number, retryAfterMs?: number): number => {
  const exponential = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(Math.max(failures - 1, 0), 40))
  const jittered = Math.round(exponential / 2 + (random * exponential) / 2)
  return retryAfterMs === undefined ? jittered : Math.max(jittered, Math.min(retryAfterMs, policy.maxMs))
}

/** Where a record's forwarding goes after a call. */
export interface AfterCall {
  readonly status: Extract<ForwardingStatus, "retrying" | "delivered" | "failed">
  readonly nextAttemptAt: string | null
  readonly lastError: string | null
  readonly forwardedAt: string | null
  /** How long the record's stream (its customer and meter) waits before its next call, when it must. */
  readonly backoffMs: number | null
}

export const afterCall = (options: {
  readonly result: CallResult
  /** Calls that failed in a row before this one. */
  readonly failuresBefore: number
  readonly nowMs: number
  readonly random: number
  readonly policy: RetryPolicy
}): AfterCall => {
  const { nowMs, result } = options
  switch (result._tag) {
    case "Accepted":
      return { status: "delivered", nextAttemptAt: null, lastError: null, forwardedAt: new Date(nowMs).toISOString(), backoffMs: null }
    case "AlreadyRecorded":
      return {
        status: "delivered",
        nextAttemptAt: null,
        lastError: result.message,
        forwardedAt: new Date(nowMs).toISOString(),
        backoffMs: null
      }
    case "Refused":
      return { status: "failed", nextAttemptAt: null, lastError: result.message, forwardedAt: null, backoffMs: null }
    case "Unavailable": {
      const delay = retryDelay(options.policy, options.failuresBefore + 1, options.random, result.retryAfterMs)
      return {
        status: "retrying",
        nextAttemptAt: new Date(nowMs + delay).toISOString(),
        lastError: result.message,
        forwardedAt: null,
        backoffMs: delay
      }
    }
  }
}

/** The message a record gets when it is older than the processor accepts: it fails without a call. */
export const EXPIRED_MESSAGE = "The usage is older than the processor accepts (35 days); it was not sent"

/** Whether a usage timestamp is too old for the processor when sent at `nowMs`. */
export const expiredForProcessor = (timestampIso: string, nowMs: number): boolean =>
  Date.parse(timestampIso) < nowMs - USAGE_PAST_MS
