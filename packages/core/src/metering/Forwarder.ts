import { Clock, Context, Duration, Effect, Exit, Latch, Layer, Random, Scope } from "effect"
import { orLog } from "../shared/logging.ts"
import { Ids } from "../shared/Ids.ts"
import { isoFromMillis as iso } from "../shared/time.ts"
import { type ClaimedStream, ForwardingRepo } from "./ForwardingRepo.ts"
import { ForwardingSignal } from "./ForwardingSignal.ts"
import { PaymentProcessor } from "./PaymentProcessor.ts"
import { afterCall, callOutcome, EXPIRED_MESSAGE, expiredForProcessor, unixSeconds } from "./rules.ts"
import { countOne, meteringProcessorCalls } from "../shared/metrics.ts"
import { ForwardingSettings } from "./settings.ts"

/** What one pass forwarded: calls made and where the records they were about went. */
export interface ForwardingSummary {
  readonly calls: number
  readonly delivered: number
  readonly retrying: number
  readonly failed: number
}

const none: ForwardingSummary = { calls: 0, delivered: 0, retrying: 0, failed: 0 }

const add = (a: ForwardingSummary, b: ForwardingSummary): ForwardingSummary => ({
  calls: a.calls + b.calls,
  delivered: a.delivered + b.delivered,
  retrying: a.retrying + b.retrying,
  failed: a.failed + b.failed
})

/**
 * Forwards usage records to the payment processor as meter events. `run` is
 * the long-lived loop: it leases streams (one customer and meter each) whose
 * records are due, and serves each in its own fiber, one call at a time,
 * oldest record first; a stream whose call failed waits out its backoff
 * before anything more of that customer and meter is sent. Interrupting
 * `run` stops claiming and lets each stream finish the call under way. A
 * forwarder that dies instead leaves its leases to run out; another then
 * takes the streams over and resends what had no outcome, under the same
 * identifiers, so the processor counts each record once.
 */
export class UsageForwarder extends Context.Service<UsageForwarder, {
  readonly run: Effect.Effect<never>
  /** Forwards everything due now, then returns what it did (one-off runs, tests). */
  readonly drain: Effect.Effect<ForwardingSummary>
}>()("@opsplatform/core/metering/UsageForwarder") {
  static readonly layer: Layer.Layer<UsageForwarder, never, ForwardingRepo | PaymentProcessor | Ids | ForwardingSignal> =
    Layer.effect(
      UsageForwarder,
      Effect.gen(function*() {
        const repo = yield* ForwardingRepo
        const processor = yield* PaymentProcessor
        const ids = yield* Ids
        const signal = yield* ForwardingSignal
        const settings = yield* ForwardingSettings

        const claim = (streams: number) =>
          Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            return yield* repo.claim({
              now: iso(now),
              leaseUntil: iso(now + settings.leaseMs),
              claimToken: yield* ids.uuid,
              environments: processor.environments,
              streams,
              perStream: settings.perStream
            })
          })

        /**
         * Sends a claimed stream's records in order, until one fails, the lease
         * is lost or `stopping` says so. Filing a call's outcome begins the
         * next record in the same statement.
         */
        const serve = (stream: ClaimedStream, stopping: () => boolean) =>
          Effect.gen(function*() {
            let summary = none
            let freeAt: string | null = null
            let begun = false
            const records = stream.records
            for (let i = 0; i < records.length; i++) {
              const record = records[i]!
              if (!begun && stopping()) break
              const lease = { streamId: stream.streamId, claimToken: stream.claimToken, usageId: record.usageId }
              const startedMs = yield* Clock.currentTimeMillis
              if (!begun && expiredForProcessor(record.timestamp, startedMs)) {
                const filed = yield* repo.settle(lease, {
                  status: "failed",
                  lastAttemptAt: null,
                  filedAt: iso(startedMs),
                  nextAttemptAt: null,
                  lastError: EXPIRED_MESSAGE,
                  forwardedAt: null
                })
                if (!filed) return summary
                summary = add(summary, { ...none, failed: 1 })
                continue
              }
              if (!begun && !(yield* repo.begin(lease, iso(startedMs), iso(startedMs + settings.leaseMs)))) return summary
              const result = yield* processor.send(stream.environment, {
                eventName: stream.meterEventName,
                customerId: stream.customerId,
                value: record.quantity,
                timestamp: unixSeconds(record.timestamp),
                identifier: record.usageId
              }).pipe(
                Effect.tap((r) => Effect.annotateCurrentSpan("metering.outcome", callOutcome(r))),
                Effect.withSpan("metering.forward", { kind: "client", attributes: { "metering.environment": stream.environment } })
              )
              yield* countOne(meteringProcessorCalls, { outcome: callOutcome(result) })
              const endedMs = yield* Clock.currentTimeMillis
              const next = afterCall({
                result,
                failuresBefore: record.attempts,
                nowMs: endedMs,
                random: yield* Random.next,
                policy: settings.retry
              })
              const following = records[i + 1]
              const beginNext = following !== undefined && next.backoffMs === null && !stopping() &&
                !expiredForProcessor(following.timestamp, endedMs)
              const filed = yield* repo.settle(
                lease,
                { ...next, lastAttemptAt: iso(startedMs), filedAt: iso(endedMs) },
                beginNext ? { usageId: following.usageId, now: iso(endedMs), leaseUntil: iso(endedMs + settings.leaseMs) } : undefined
              )
              begun = beginNext && filed
              if (next.status !== "delivered") {
                yield* Effect.logWarning(
                  next.status === "failed"
                    ? "the payment processor refused a usage record"
                    : "the payment processor did not take a usage record; it will be retried"
                ).pipe(Effect.annotateLogs({
                  usage_id: record.usageId,
                  organization_id: record.organizationId,
                  status: result._tag === "Refused" || result._tag === "Unavailable" ? result.status : null,
                  error: next.lastError,
                  next_attempt_at: next.nextAttemptAt
                }))
              }
              summary = add(summary, {
                calls: 1,
                delivered: next.status === "delivered" ? 1 : 0,
                retrying: next.status === "retrying" ? 1 : 0,
                failed: next.status === "failed" ? 1 : 0
              })
              // Another forwarder holds the stream now: it files what comes next.
              if (!filed) return summary
              if (next.backoffMs !== null) {
                freeAt = iso(endedMs + next.backoffMs)
                break
              }
            }
            yield* repo.release(stream.streamId, stream.claimToken, freeAt)
            return summary
          })

        const drain = Effect.gen(function*() {
          let total = none
          for (;;) {
            const claimed = yield* claim(settings.streams)
            if (claimed.length === 0) return total
            const served = yield* Effect.forEach(claimed, (s) => serve(s, () => false), { concurrency: "unbounded" })
            total = served.reduce(add, total)
          }
        })

        const run: Effect.Effect<never> = Effect.gen(function*() {
          // Streams are served in their own scope, so stopping the claim loop lets each finish its call.
          const work = yield* Scope.make()
          const freed = yield* Latch.make(false)
          let inFlight = 0
          let stopping = false

          const claimLoop = Effect.forever(Effect.gen(function*() {
            const free = settings.streams - inFlight
            if (free <= 0) {
              yield* freed.close
              if (settings.streams - inFlight <= 0) yield* freed.await
              return
            }
            yield* signal.reset
            const claimed = yield* orLog(claim(free), "usage records could not be claimed", [])
            inFlight += claimed.length
            for (const stream of claimed) {
              // A stream that used its whole claim may have more due at once: the loop looks again without waiting.
              const full = stream.records.length >= settings.perStream
              const served = orLog(serve(stream, () => stopping), "a usage stream failed unexpectedly", none).pipe(
                Effect.tap((summary) => full && summary.retrying === 0 ? signal.notify : Effect.void),
                Effect.ensuring(Effect.andThen(Effect.sync(() => (inFlight -= 1)), freed.open))
              )
              yield* Effect.forkIn(served, work)
            }
            if (claimed.length < free) yield* signal.wait(settings.pollIntervalMs)
          }))

          const finish = Effect.gen(function*() {
            stopping = true
            const deadline = (yield* Clock.currentTimeMillis) + settings.leaseMs
            while (inFlight > 0 && (yield* Clock.currentTimeMillis) < deadline) yield* Effect.sleep(Duration.millis(20))
            yield* Scope.close(work, Exit.void)
          })

          return yield* claimLoop.pipe(Effect.ensuring(finish))
        })

        return UsageForwarder.of({ run, drain })
      })
    )
}
