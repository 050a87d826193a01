import { Context } from "effect"
import { defaultSchedule } from "./rules.ts"

export interface WebhookSettingsShape {
  /** Delays after each failed attempt; its length + 1 is the attempt budget. */
  readonly schedule: ReadonlyArray<number>
  /** One attempt's whole exchange (15 s: docs/decisions.md, "Design: events and webhooks"). */
  readonly timeoutMs: number
  /** How long a claimed delivery stays a worker's before another may take it over. */
  readonly leaseMs: number
  /** Deliveries claimed per query. */
  readonly batchSize: number
  /** Deliveries one worker has in flight at most. */
  readonly concurrency: number
  /** How often an idle worker looks for due deliveries when nothing wakes it. */
  readonly pollIntervalMs: number
  /** How much of a receiver's answer is read and kept (4 KiB: docs/decisions.md, "Design: events and webhooks"). */
  readonly maxResponseBytes: number
  /** Operator switch (`OPSPLATFORM_WEBHOOKS_ALLOW_PRIVATE=true`): loopback and private destinations allowed. */
  readonly allowPrivateDestinations: boolean
  readonly userAgent: string
  /** Subscriptions an organization environment may have (`OPSPLATFORM_WEBHOOKS_MAX_SUBSCRIPTIONS`). */
  readonly maxSubscriptions: number
  /** Test sends per minute per organization environment (`OPSPLATFORM_WEBHOOKS_TESTS_PER_MIN`). */
  readonly testsPerMinute: number
  /** Redeliveries asked for per minute per organization environment (`OPSPLATFORM_WEBHOOKS_REDELIVERIES_PER_MIN`). */
  readonly redeliveriesPerMinute: number
}

export const defaultWebhookSettings: WebhookSettingsShape = {
  schedule: defaultSchedule,
  timeoutMs: 15_000,
  // Longer than an attempt can take, so a lease only runs out when its worker stopped.
  leaseMs: 45_000,
  batchSize: 100,
  concurrency: 200,
  pollIntervalMs: 1_000,
  maxResponseBytes: 4 * 1024,
  allowPrivateDestinations: false,
  userAgent: "OpsPlatform-Webhooks/1.0",
  maxSubscriptions: 20,
  testsPerMinute: 10,
  redeliveriesPerMinute: 60
}

/** Delivery settings; hosts override them from their configuration, tests shorten the schedule. */
export const WebhookSettings = Context.Reference<WebhookSettingsShape>("@opsplatform/core/webhooks/WebhookSettings", {
  defaultValue: () => defaultWebhookSettings
})
