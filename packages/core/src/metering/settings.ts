import { Context } from "effect"
import type { RetryPolicy } from "./rules.ts"

export interface ForwardingSettings {
  /**
   * How long a claimed stream (one customer and meter) stays a forwarder's
   * without news; renewed before every call, so it runs out only when its
   * forwarder stopped. Longer than a call can take.
   */
  readonly leaseMs: number
  /** Streams claimed per query, and so streams one forwarder serves at once. */
  readonly streams: number
  /** Records of one stream sent, one after another, under one claim. */
  readonly perStream: number
  /** How often an idle forwarder looks for due records when nothing wakes it. */
  readonly pollIntervalMs: number
  readonly retry: RetryPolicy
}

export const defaultForwardingSettings: ForwardingSettings = {
  leaseMs: 60_000,
  streams: 50,
  perStream: 20,
  pollIntervalMs: 1_000,
  retry: { baseMs: 1_000, maxMs: 10 * 60_000 }
}

/** Forwarding settings; hosts override them from their configuration, tests shorten them. */
export const ForwardingSettings = Context.Reference<ForwardingSettings>("@opsplatform/core/metering/ForwardingSettings", {
  defaultValue: () => defaultForwardingSettings
})

/**
 * How the SQL store writes usage reports: concurrent reports share a
 * statement and a commit (`makeGroupCommit`), up to `maxGroup` in one, with at
 * most `groupsInFlight` such statements under way in a process. A `maxGroup`
 * of 1 writes each report by itself, as many at once as the pool allows.
 * Decided: docs/decisions.md, "Usage metering".
 */
export interface RecordingSettings {
  readonly maxGroup: number
  readonly groupsInFlight: number
}

export const defaultRecordingSettings: RecordingSettings = { maxGroup: 100, groupsInFlight: 2 }

export const RecordingSettings = Context.Reference<RecordingSettings>("@opsplatform/core/metering/RecordingSettings", {
  defaultValue: () => defaultRecordingSettings
})
