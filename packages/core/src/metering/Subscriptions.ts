import { Context, Effect, Layer } from "effect"
import { ContactRepo } from "../contacts/ContactRepo.ts"
import { Conflict, InvalidTransition, type NotFound } from "../shared/errors.ts"
import { Ids, newId } from "../shared/Ids.ts"
import { findOr404 } from "../shared/lookup.ts"
import { assemblePage, type Page, type PageRequest } from "../shared/pagination.ts"
import { isUuid } from "../shared/schemas.ts"
import type { Tenant } from "../shared/tenant.ts"
import { nowIso } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import {
  type Subscription,
  type SubscriptionCreate,
  type SubscriptionFilter,
  SubscriptionId,
  type SubscriptionUpdate
} from "./model.ts"
import { subscriptionLifecycle } from "./rules.ts"
import { SubscriptionRepo } from "./SubscriptionRepo.ts"

/**
 * Metered subscriptions of an organization environment's contacts: which
 * processor customer and meter their usage is reported to, and whether usage
 * is accepted (`active`). The contact must be the tenant's own.
 */
export class Subscriptions extends Context.Service<Subscriptions, {
  readonly create: (tenant: Tenant, input: SubscriptionCreate) => Effect.Effect<Subscription, NotFound>
  readonly get: (tenant: Tenant, id: string) => Effect.Effect<Subscription, NotFound>
  readonly list: (tenant: Tenant, filter: SubscriptionFilter, page: PageRequest) => Effect.Effect<Page<Subscription>>
  readonly update: (
    tenant: Tenant,
    id: string,
    patch: SubscriptionUpdate
  ) => Effect.Effect<Subscription, NotFound | InvalidTransition | Conflict>
}>()("@opsplatform/core/metering/Subscriptions") {
  static readonly layer: Layer.Layer<Subscriptions, never, SubscriptionRepo | ContactRepo | Ids | Transactor> = Layer
    .effect(
      Subscriptions,
      Effect.gen(function*() {
        const repo = yield* SubscriptionRepo
        const contacts = yield* ContactRepo
        const ids = yield* Ids
        const tx = yield* Transactor
        const get = (tenant: Tenant, id: string, forUpdate?: boolean) =>
          findOr404("subscription", id, (id) => repo.find(tenant, id, forUpdate))

        return Subscriptions.of({
          create: Effect.fn("Subscriptions.create")(function*(tenant, input) {
            yield* findOr404("contact", input.contact_id, (id) => contacts.find(tenant, id))
            const now = yield* nowIso
            const subscription: Subscription = {
              id: yield* newId(ids, SubscriptionId),
              contact_id: input.contact_id,
              processor: input.processor ?? "stripe",
              processor_customer_id: input.processor_customer_id,
              meter_event_name: input.meter_event_name,
              status: "active",
              created_at: now,
              updated_at: now
            }
            yield* repo.insert(tenant, subscription)
            return subscription
          }),
          get: (tenant, id) => get(tenant, id),
          list: (tenant, filter, page) =>
            filter.contact_id !== undefined && !isUuid(filter.contact_id)
              ? Effect.succeed(assemblePage<Subscription>(page, [], 0, (s) => ({ createdAt: s.created_at, id: s.id })))
              : repo.list(tenant, filter, page),
          update: Effect.fn("Subscriptions.update")(function*(tenant, id, patch) {
            return yield* tx.withTransaction(Effect.gen(function*() {
              const current = yield* get(tenant, id, true)
              const next: Subscription = { ...current, ...patch }
              const changed = next.status !== current.status ||
                next.processor_customer_id !== current.processor_customer_id ||
                next.meter_event_name !== current.meter_event_name
              if (!changed) return current
              if (next.status !== current.status && !subscriptionLifecycle.can(current.status, next.status)) {
                return yield* new InvalidTransition({ resource: "subscription", from: current.status, to: next.status })
              }
              if (current.status === "cancelled") {
                return yield* new Conflict({ reason: "A cancelled subscription cannot change" })
              }
              const updated = { ...next, updated_at: yield* nowIso }
              yield* repo.update(tenant, updated)
              return updated
            }))
          })
        })
      })
    )
}

