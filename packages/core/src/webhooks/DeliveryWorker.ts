import { Clock, Context, Duration, Effect, Exit, Latch, Layer, Metric, Queue, Random, Result, Scope } from "effect"
import { Mac, Signature } from "effect/crypto"
import { orLog } from "../shared/logging.ts"
import {
  countOne,
  webhookAttempts,
  webhookDeliveriesDead,
  webhookFirstAttemptDelay,
  webhookSubscriptionsDisabled
} from "../shared/metrics.ts"
import { Ids, newId } from "../shared/Ids.ts"
import { isoFromMillis as iso } from "../shared/time.ts"
import { DeliveryRepo } from "./DeliveryRepo.ts"
import { DeliverySignal } from "./DeliverySignal.ts"
import { type AttemptRecord, type ClaimedDelivery, type DeliveryOutcome, WebhookAttemptId } from "./model.ts"
import { afterAttempt, attemptBudget, type AttemptResult, parseRetryAfter } from "./rules.ts"
import { SecretBox } from "./SecretBox.ts"
import { WebhookSettings } from "./settings.ts"
import { secretContext, signatureHeader, type SigningKey, signingKey } from "./signing.ts"
import { type TransportFailure, WebhookTransport } from "./WebhookTransport.ts"

/** Most outcomes one record statement writes, and how long a small batch waits for company. */
const RECORD_BATCH = 500
const RECORD_GATHER_MS = 5

const LOST_ATTEMPT = "No outcome was recorded: the worker sending this attempt stopped before its lease ran out"

/** PostgreSQL text holds no NUL; a receiver's answer may. */
const storable = (text: string): string => text.replace(/\u0000/g, "\uFFFD")

/**
 * Sends webhook deliveries. `run` is the long-lived loop: it leases due
 * deliveries in batches (the claim commits before anything is sent), sends
 * them concurrently, and records outcomes in batches as they come back, so a
 * slow receiver holds one slot, never the worker. Interrupting `run` stops
 * claiming and waits for the attempts in flight to be recorded. A worker that
 * dies instead leaves its leases to run out; another worker then takes those
 * deliveries over (at-least-once).
 */
export class DeliveryWorker extends Context.Service<DeliveryWorker, {
  readonly run: Effect.Effect<never>
  /** Attempts every delivery due now, and returns how many attempts it made (tests, one-off runs). */
  readonly drain: Effect.Effect<number>
}>()("@opsplatform/core/webhooks/DeliveryWorker") {
  static readonly layer: Layer.Layer<
    DeliveryWorker,
    never,
    DeliveryRepo | WebhookTransport | SecretBox | Mac.Mac | Signature.Signature | Ids | DeliverySignal
  > = Layer.effect(
    DeliveryWorker,
    Effect.gen(function*() {
      const repo = yield* DeliveryRepo
      const transport = yield* WebhookTransport
      const box = yield* SecretBox
      const crypto = yield* Effect.context<Mac.Mac | Signature.Signature>()
      const ids = yield* Ids
      const signal = yield* DeliverySignal
      const settings = yield* WebhookSettings
      const encoder = new TextEncoder()

      // Keys never change once written, so an opened key stays good for its id.
      const keys = new Map<string, SigningKey>()
      const keyOf = (secret: ClaimedDelivery["secrets"][number]) => {
        const cached = keys.get(secret.id)
        if (cached !== undefined) return Effect.succeed(cached)
        return box.open(secret.sealed, secretContext(secret.id)).pipe(
          Effect.flatMap((opened) => signingKey(secret.scheme, opened)),
          Effect.tap((key) =>
            Effect.sync(() => {
              if (keys.size >= 10_000) keys.clear()
              keys.set(secret.id, key)
            })
          )
        )
      }

      /** One attempt of a claimed delivery, and the state it leaves behind. */
      const attempt = (claimed: ClaimedDelivery): Effect.Effect<DeliveryOutcome> =>
        Effect.gen(function*() {
          const budget = attemptBudget(settings.schedule)
          const log: Array<AttemptRecord> = []
          let used = claimed.attempts
          const claimedAt = yield* Clock.currentTimeMillis
          if (claimed.reclaimed) {
            used += 1
            log.push({
              id: yield* newId(ids, WebhookAttemptId),
              delivery_id: claimed.id,
              number: claimed.attemptNumber - 1,
              created_at: iso(claimedAt),
              status_code: null,
              duration_ms: 0,
              error: LOST_ATTEMPT,
              response_body: null,
              next_attempt_at: used >= budget ? null : iso(claimedAt)
            })
          }
          const base = {
            id: claimed.id,
            claimToken: claimed.claimToken,
            lastAttemptAt: iso(claimedAt),
            disableSubscription: false
          }
          if (used >= budget) {
            yield* countOne(webhookDeliveriesDead, {})
            return { ...base, status: "dead", attempts: used, nextAttemptAt: null, lastStatusCode: null, lastError: LOST_ATTEMPT, log }
          }

          const body = encoder.encode(claimed.payload)
          const started = yield* Clock.currentTimeMillis
          if (claimed.attemptNumber === 1) {
            yield* Metric.update(webhookFirstAttemptDelay, Math.max(0, started - Date.parse(claimed.eventCreatedAt)) / 1000)
          }
          const timestamp = Math.floor(started / 1000)
          const sent = yield* Effect.gen(function*() {
            const signingKeys = yield* Effect.forEach(claimed.secrets, keyOf)
            if (signingKeys.length === 0) return yield* Effect.die(new Error("the subscription has no valid signing secret"))
            const signature = yield* Effect.provideContext(
              signatureHeader(signingKeys, claimed.eventId, timestamp, body),
              crypto
            )
            return yield* transport.send({
              url: claimed.url,
              headers: {
                "content-type": "application/json",
                "user-agent": settings.userAgent,
                "webhook-id": claimed.eventId,
                "webhook-timestamp": String(timestamp),
                "webhook-signature": signature,
                "x-service-event": claimed.eventType,
                "x-service-delivery": claimed.id
              },
              body,
              timeoutMs: settings.timeoutMs,
              maxResponseBytes: settings.maxResponseBytes,
              allowPrivate: settings.allowPrivateDestinations
            }).pipe(
              Effect.tap((answer) => Effect.annotateCurrentSpan("http.response.status_code", answer.status)),
              Effect.withSpan("webhook.send", {
                kind: "client",
                attributes: { "webhook.event_type": claimed.eventType, "webhook.attempt": claimed.attemptNumber }
              }),
              Effect.result
            )
          }).pipe(
            // Nothing was sent; the attempt fails and the schedule goes on (the cause is in the log line).
            Effect.catchDefect((defect) =>
              Effect.as(
                Effect.logError("a webhook delivery could not be signed", defect).pipe(
                  Effect.annotateLogs({ deliveryId: claimed.id })
                ),
                Result.fail<TransportFailure>({ _tag: "TransportFailure", message: "The delivery could not be signed" })
              )
            )
          )
          const ended = yield* Clock.currentTimeMillis
          const result: AttemptResult = sent._tag === "Success"
            ? { _tag: "Answered", status: sent.success.status, retryAfterMs: parseRetryAfter(sent.success.retryAfter, ended) }
            : { _tag: "NotAnswered", error: sent.failure.message }
          used += 1
          const next = afterAttempt({ result, attemptsUsed: used, schedule: settings.schedule, random: yield* Random.next })
          const nextAttemptAt = next.delayMs === undefined ? null : iso(ended + next.delayMs)
          const statusCode = result._tag === "Answered" ? result.status : null
          const gone = statusCode === 410
          yield* countOne(webhookAttempts, { outcome: next.status })
          if (next.status === "dead") yield* countOne(webhookDeliveriesDead, {})
          if (gone) yield* countOne(webhookSubscriptionsDisabled, {})
          const error = result._tag === "NotAnswered"
            ? result.error
            : gone
            ? "The receiver answered 410 Gone: the subscription is disabled"
            : statusCode !== null && statusCode >= 300 && statusCode < 400
            ? "Redirects are not followed; point the subscription at the final address"
            : null
          log.push({
            id: yield* newId(ids, WebhookAttemptId),
            delivery_id: claimed.id,
            number: claimed.attemptNumber,
            created_at: iso(started),
            status_code: statusCode,
            duration_ms: Math.max(0, Math.round(ended - started)),
            error: error === null ? null : storable(error),
            response_body: sent._tag === "Success" ? storable(sent.success.body) : null,
            next_attempt_at: nextAttemptAt
          })
          return {
            ...base,
            lastAttemptAt: iso(started),
            status: next.status,
            attempts: used,
            nextAttemptAt,
            lastStatusCode: statusCode,
            lastError: error === null ? null : storable(error),
            log,
            disableSubscription: gone
          }
        })

      const claim = (limit: number) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          return yield* repo.claim({
            now: iso(now),
            limit,
            leaseUntil: iso(now + settings.leaseMs),
            claimToken: yield* ids.uuid
          })
        })

      const record = (outcomes: ReadonlyArray<DeliveryOutcome>) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => repo.record(outcomes, iso(now)))

      const drain = Effect.gen(function*() {
        let total = 0
        for (;;) {
          const claimed = yield* claim(settings.batchSize)
          if (claimed.length === 0) return total
          const outcomes = yield* Effect.forEach(claimed, (c) => attempt(c), { concurrency: settings.concurrency })
          yield* record(outcomes)
          total += outcomes.reduce((n, o) => n + o.log.length, 0)
        }
      })

      const run: Effect.Effect<never> = Effect.gen(function*() {
        const results = yield* Queue.unbounded<DeliveryOutcome>()
        const capacity = yield* Latch.make(true)
        let inFlight = 0
        // Attempts and the recorder live in their own scope, so stopping the claim loop lets them finish.
        const work = yield* Scope.make()

        const recorder = Effect.forever(Effect.gen(function*() {
          let batch: ReadonlyArray<DeliveryOutcome> = yield* Queue.takeBetween(results, 1, RECORD_BATCH)
          // Outcomes come back one by one: a few milliseconds gather them into one statement.
          if (batch.length < RECORD_BATCH / 10) {
            yield* Effect.sleep(Duration.millis(RECORD_GATHER_MS))
            batch = [...batch, ...(yield* Queue.takeBetween(results, 0, RECORD_BATCH - batch.length))]
          }
          // The leases will run out and other attempts will follow: delivery stays at-least-once.
          yield* orLog(record(batch), "webhook outcomes could not be recorded", undefined)
          inFlight -= batch.length
          yield* capacity.open
        }))
        yield* Effect.forkIn(recorder, work)

        const claimLoop = Effect.forever(Effect.gen(function*() {
          const free = settings.concurrency - inFlight
          if (free < Math.min(settings.batchSize, settings.concurrency) / 2 && inFlight > 0) {
            yield* capacity.close
            if (settings.concurrency - inFlight < Math.min(settings.batchSize, settings.concurrency) / 2) {
              yield* capacity.await
            }
            return
          }
          yield* signal.reset
          const limit = Math.min(settings.batchSize, free)
          const claimed: ReadonlyArray<ClaimedDelivery> = yield* orLog(claim(limit), "webhook deliveries could not be claimed", [])
          inFlight += claimed.length
          for (const c of claimed) {
            const attempted = Effect.flatMap(attempt(c), (o) => Queue.offer(results, o)).pipe(
              // Nothing to record: the lease runs out and the next claim tries again.
              Effect.catchDefect((defect) =>
                Effect.andThen(
                  Effect.logError("a webhook attempt failed unexpectedly", defect).pipe(Effect.annotateLogs({ deliveryId: c.id })),
                  Effect.andThen(Effect.sync(() => (inFlight -= 1)), capacity.open)
                )
              )
            )
            yield* Effect.forkIn(attempted, work)
          }
          if (claimed.length < limit) yield* signal.wait(settings.pollIntervalMs)
        }))

        const finish = Effect.gen(function*() {
          const deadline = (yield* Clock.currentTimeMillis) + settings.timeoutMs + 5_000
          while (inFlight > 0 && (yield* Clock.currentTimeMillis) < deadline) yield* Effect.sleep(Duration.millis(20))
          yield* Scope.close(work, Exit.void)
        })

        return yield* claimLoop.pipe(Effect.ensuring(finish))
      })

      return DeliveryWorker.of({ run, drain })
    })
  )
}
