import { Effect, Layer, Option } from "effect"
import { type OutboxEvent, Outbox, OutboxListener } from "../events/Outbox.ts"
import type { Tenant } from "../shared/tenant.ts"
import { Transactor } from "../shared/Transactor.ts"
import { DeliveryRepo } from "./DeliveryRepo.ts"
import { DeliverySignal } from "./DeliverySignal.ts"
import type { WebhookDeliveryId, WebhookSubscriptionId } from "./model.ts"

/**
 * The webhooks area's outbox listener: each stored event is queued for every
 * enabled subscription of its tenant that lists its type, in the publishing
 * transaction; once that commits, local workers are woken (workers in other
 * processes hear the database's notification).
 */
export const WebhookFanOut: Layer.Layer<OutboxListener, never, DeliveryRepo | DeliverySignal | Transactor> = Layer.effect(
  OutboxListener,
  Effect.gen(function*() {
    const deliveries = yield* DeliveryRepo
    const signal = yield* DeliverySignal
    const tx = yield* Transactor
    return OutboxListener.of({
      published: (tenant, event) =>
        Effect.flatMap(deliveries.enqueue(tenant, event), (queued) => queued.length > 0 ? tx.afterCommit(signal.notify) : Effect.void)
    })
  })
)

/**
 * Publishes an event for one subscription of the tenant only, whatever its
 * types (the test ping). Answers the delivery id and the body it sends, or
 * none when the event id already existed or the subscription is not the tenant's.
 */
export const publishTo = (
  tenant: Tenant,
  event: OutboxEvent,
  subscriptionId: WebhookSubscriptionId
): Effect.Effect<
  Option.Option<{ readonly deliveryId: WebhookDeliveryId; readonly payload: string }>,
  never,
  Outbox | DeliveryRepo | DeliverySignal | Transactor
> =>
  Effect.gen(function*() {
    const tx = yield* Transactor
    const outbox = yield* Outbox
    const deliveries = yield* DeliveryRepo
    const signal = yield* DeliverySignal
    return yield* tx.withTransaction(Effect.gen(function*() {
      const stored = yield* outbox.publish(tenant, event)
      if (Option.isNone(stored)) return Option.none()
      const queued = yield* deliveries.enqueue(tenant, stored.value, subscriptionId)
      if (queued.length > 0) yield* tx.afterCommit(signal.notify)
      return Option.map(Option.fromNullishOr(queued[0]), (deliveryId) => ({ deliveryId, payload: stored.value.payload }))
    }))
  })
