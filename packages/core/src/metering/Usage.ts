import { Clock, Context, Effect, Layer, Option } from "effect"
import { Conflict, NotFound, ValidationFailed } from "../shared/errors.ts"
import { Ids, newId } from "../shared/Ids.ts"
import { findOr404 } from "../shared/lookup.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { isUuid } from "../shared/schemas.ts"
import type { Tenant } from "../shared/tenant.ts"
import { isoFromMillis } from "../shared/time.ts"
import { ForwardingSignal } from "./ForwardingSignal.ts"
import { type StoredUsage, type SubscriptionId, type UsageFilter, type UsageRecord, UsageRecordId, type UsageReport } from "./model.ts"
import { inUsageWindow, normalizedInstant, retryDiffers, usageWindowIssue } from "./rules.ts"
import { SubscriptionRepo } from "./SubscriptionRepo.ts"
import { UsageRepo } from "./UsageRepo.ts"

/**
 * Usage reports of subscriptions (spec: `POST /subscriptions/{id}/usage`).
 * A report is recorded once per identifier of a subscription, forever: a
 * retry under a recorded identifier is a no-op, answered like the first,
 * even when the subscription stopped being active since or the timestamp
 * left the window. A retry that says something else than the record (another
 * quantity or instant) still changes nothing but is counted on the record
 * and logged. A report without an identifier gets the record's id as one, so
 * its forwarding stays idempotent too. The record and its forwarding job
 * commit together; the forwarder sends it later (`UsageForwarder`).
 */
export class Usage extends Context.Service<Usage, {
  readonly report: (
    tenant: Tenant,
    subscriptionId: string,
    report: UsageReport
  ) => Effect.Effect<void, NotFound | Conflict | ValidationFailed>
  readonly list: (
    tenant: Tenant,
    subscriptionId: string,
    filter: UsageFilter,
    page: PageRequest
  ) => Effect.Effect<Page<UsageRecord>, NotFound>
}>()("@opsplatform/core/metering/Usage") {
  static readonly layer: Layer.Layer<Usage, never, SubscriptionRepo | UsageRepo | Ids | ForwardingSignal> = Layer.effect(
    Usage,
    Effect.gen(function*() {
      const subscriptions = yield* SubscriptionRepo
      const usage = yield* UsageRepo
      const ids = yield* Ids
      const signal = yield* ForwardingSignal
      const subscription = (tenant: Tenant, id: string) => findOr404("subscription", id, (id) => subscriptions.find(tenant, id))

      /** A retry of a recorded report: nothing changes, but a retry that disagrees is counted and logged. */
      const retried = (tenant: Tenant, stored: StoredUsage, report: UsageReport, nowMs: number) =>
        retryDiffers(stored, report)
          ? usage.noteDifferingRetry(tenant, stored.id, isoFromMillis(nowMs)).pipe(
            Effect.andThen(Effect.logWarning("a usage retry differs from the recorded report; the record stands").pipe(
              Effect.annotateLogs({
                subscription_id: stored.subscription_id,
                usage_id: stored.id,
                recorded_quantity: stored.quantity,
                retry_quantity: report.quantity,
                recorded_timestamp: stored.timestamp,
                retry_timestamp: report.timestamp ?? null
              })
            ))
          )
          : Effect.void

      /** The record under the report's identifier, when there is one. */
      const recorded = (tenant: Tenant, subscriptionId: string, report: UsageReport) =>
        report.identifier === undefined
          ? Effect.succeedNone
          : usage.findByIdentifier(tenant, subscriptionId, report.identifier)

      return Usage.of({
        report: Effect.fn("Usage.report")(function*(tenant, subscriptionId, report) {
          const nowMs = yield* Clock.currentTimeMillis
          /** A report that cannot be recorded: still a no-op when it retries one accepted earlier. */
          const refused = (refusal: Conflict | ValidationFailed) =>
            Effect.gen(function*() {
              const sub = yield* subscription(tenant, subscriptionId)
              const earlier = yield* recorded(tenant, sub.id, report)
              if (Option.isSome(earlier)) return yield* retried(tenant, earlier.value, report, nowMs)
              return yield* refusal
            })
          if (report.timestamp !== undefined && !inUsageWindow(Date.parse(report.timestamp), nowMs)) {
            return yield* refused(ValidationFailed.field("timestamp", usageWindowIssue(nowMs)))
          }
          if (!isUuid(subscriptionId)) return yield* new NotFound({ resource: "subscription", id: subscriptionId })
          const id = yield* newId(ids, UsageRecordId)
          const now = isoFromMillis(nowMs)
          const outcome = yield* usage.record(tenant, {
            id,
            subscription_id: subscriptionId as SubscriptionId,
            identifier: report.identifier ?? id,
            quantity: report.quantity,
            timestamp: report.timestamp === undefined ? now : normalizedInstant(report.timestamp),
            created_at: now
          })
          switch (outcome._tag) {
            case "Recorded":
              return yield* signal.notify
            case "NoSubscription":
              return yield* new NotFound({ resource: "subscription", id: subscriptionId })
            case "NotActive":
              return yield* refused(
                new Conflict({ reason: `The subscription is ${outcome.status}: usage is accepted only while it is active` })
              )
            case "AlreadyRecorded": {
              const earlier = yield* recorded(tenant, subscriptionId, report)
              if (Option.isSome(earlier)) yield* retried(tenant, earlier.value, report, nowMs)
            }
          }
        }),
        list: (tenant, subscriptionId, filter, page) =>
          Effect.flatMap(subscription(tenant, subscriptionId), (sub) => usage.list(tenant, sub.id, filter, page))
      })
    })
  )
}
