import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { SecureRandom, Signature } from "effect/crypto"
import { event, eventJsonSchema, eventTypes, exampleBody, freshEventId, subscribableEventTypes } from "../events/catalog.ts"
import { Outbox } from "../events/Outbox.ts"
import { RateLimiter } from "../ratelimit/RateLimiter.ts"
import { Conflict, NotFound, RateLimited, ValidationFailed } from "../shared/errors.ts"
import { Ids, newId } from "../shared/Ids.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import type { Tenant } from "../shared/tenant.ts"
import { isoFromMillis as iso } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { DeliveryRepo } from "./DeliveryRepo.ts"
import { DeliverySignal } from "./DeliverySignal.ts"
import { checkWebhookUrl, isIpLiteral, isPublicAddress } from "./destinations.ts"
import {
  DEFAULT_ROTATION_GRACE_SECONDS,
  type DeliveryFilter,
  type SigningScheme,
  type StoredSecret,
  type StoredSubscription,
  type WebhookAttempt,
  type WebhookDelivery,
  WebhookDeliveryId,
  WebhookSecretId,
  type WebhookEventType,
  type WebhookPublicKey,
  type WebhookRedeliver,
  type WebhookSecret,
  type WebhookSecretRotate,
  type WebhookSubscription,
  type WebhookSubscriptionCreate,
  WebhookSubscriptionId,
  type WebhookSubscriptionUpdate,
  type WebhookSubscriptionWithSecret,
  type WebhookTestResult
} from "./model.ts"
import { redeliverDecision } from "./rules.ts"
import { publishTo } from "./fanOut.ts"
import { SecretBox } from "./SecretBox.ts"
import { WebhookSettings } from "./settings.ts"
import { generateKeyPair, generateSecret, secretContext } from "./signing.ts"
import { WebhookRepo } from "./WebhookRepo.ts"
import { WebhookTransport } from "./WebhookTransport.ts"

/** The subscribable types with their JSON Schemas and examples, generated once. */
const catalog: ReadonlyArray<WebhookEventType> = subscribableEventTypes.map((type) => ({
  type,
  description: eventTypes[type].description,
  schema: eventJsonSchema(type),
  example: exampleBody(type)
}))

/** Rotated-out secrets kept valid at once, besides the current one. */
export const MAX_RETIRING_SECRETS = 2

// Services look up only well-formed ids: a malformed one is NotFound, not a query the database refuses.
const isSubscriptionId = Schema.is(WebhookSubscriptionId)
const isDeliveryId = Schema.is(WebhookDeliveryId)

/**
 * Webhook subscriptions of an organization environment, their secrets, the
 * delivery log and redeliver. Sending is the DeliveryWorker's.
 */
export class Webhooks extends Context.Service<Webhooks, {
  readonly eventTypes: Effect.Effect<ReadonlyArray<WebhookEventType>>
  /** At most `maxSubscriptions` per organization environment: past it, 409. */
  readonly create: (
    tenant: Tenant,
    input: WebhookSubscriptionCreate
  ) => Effect.Effect<WebhookSubscriptionWithSecret, ValidationFailed | Conflict>
  readonly get: (tenant: Tenant, id: string) => Effect.Effect<WebhookSubscription, NotFound>
  readonly list: (tenant: Tenant, page: PageRequest) => Effect.Effect<Page<WebhookSubscription>>
  readonly update: (
    tenant: Tenant,
    id: string,
    patch: WebhookSubscriptionUpdate
  ) => Effect.Effect<WebhookSubscription, NotFound | ValidationFailed>
  readonly remove: (tenant: Tenant, id: string) => Effect.Effect<void, NotFound>
  readonly rotateSecret: (
    tenant: Tenant,
    id: string,
    input: WebhookSecretRotate
  ) => Effect.Effect<WebhookSubscriptionWithSecret, NotFound>
  /** The current signing key: a `v1` secret opened from its sealed form, or a `v1a` public key. */
  readonly revealSecret: (tenant: Tenant, id: string) => Effect.Effect<WebhookSecret, NotFound>
  /** The public keys deliveries are signed for now (`v1a` keys not yet expired), newest first. */
  readonly publicKeys: (tenant: Tenant, id: string) => Effect.Effect<ReadonlyArray<WebhookPublicKey>, NotFound>
  /** At most `testsPerMinute` per organization environment: past it, 429. */
  readonly sendTest: (tenant: Tenant, id: string) => Effect.Effect<WebhookTestResult, NotFound | Conflict | RateLimited>
  readonly listDeliveries: (
    tenant: Tenant,
    id: string,
    filter: DeliveryFilter,
    page: PageRequest
  ) => Effect.Effect<Page<WebhookDelivery>, NotFound>
  readonly getDelivery: (tenant: Tenant, id: string, deliveryId: string) => Effect.Effect<WebhookDelivery, NotFound>
  readonly listAttempts: (
    tenant: Tenant,
    id: string,
    deliveryId: string,
    page: PageRequest
  ) => Effect.Effect<Page<WebhookAttempt>, NotFound>
  readonly redeliver: (
    tenant: Tenant,
    id: string,
    deliveryId: string,
    input: WebhookRedeliver
  ) => Effect.Effect<void, NotFound | Conflict | RateLimited>
}>()("@opsplatform/core/webhooks/Webhooks") {
  static readonly layer: Layer.Layer<
    Webhooks,
    never,
    | WebhookRepo
    | DeliveryRepo
    | Outbox
    | Ids
    | Transactor
    | SecretBox
    | WebhookTransport
    | DeliverySignal
    | RateLimiter
    | SecureRandom.SecureRandom
    | Signature.Signature
  > = Layer.effect(
    Webhooks,
    Effect.gen(function*() {
      const repo = yield* WebhookRepo
      const deliveries = yield* DeliveryRepo
      const sendContext = yield* Effect.context<Outbox | DeliveryRepo | DeliverySignal | Transactor>()
      const ids = yield* Ids
      const tx = yield* Transactor
      const box = yield* SecretBox
      const transport = yield* WebhookTransport
      const signal = yield* DeliverySignal
      const settings = yield* WebhookSettings
      const limiter = yield* RateLimiter
      const keyCrypto = yield* Effect.context<SecureRandom.SecureRandom | Signature.Signature>()

      const nowMs = Clock.currentTimeMillis

      const toApi = ({ latest_secret_expiry, ...subscription }: StoredSubscription, now: number): WebhookSubscription => ({
        ...subscription,
        previous_secret_expires_at: latest_secret_expiry !== null && Date.parse(latest_secret_expiry) > now
          ? latest_secret_expiry
          : null
      })

      const find = (tenant: Tenant, id: string) =>
        (isSubscriptionId(id) ? repo.find(tenant, id) : Effect.succeedNone).pipe(
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new NotFound({ resource: "webhook subscription", id })),
            onSome: Effect.succeed
          }))
        )

      /**
       * The URL rules, then DNS: a name whose every answer is public passes; one
       * that resolves to a private address is refused now rather than at send
       * time. A name that does not resolve yet is accepted (and checked again at
       * every send).
       */
      const checkUrl = Effect.fnUntraced(function*(tenant: Tenant, input: string) {
        const checked = checkWebhookUrl(input, tenant.environment, settings.allowPrivateDestinations)
        if (checked._tag === "Refused") return yield* ValidationFailed.field("url", checked.issue)
        if (!settings.allowPrivateDestinations && !isIpLiteral(checked.hostname)) {
          const addresses = yield* transport.resolve(checked.hostname).pipe(Effect.orElseSucceed(() => []))
          if (addresses.some((a) => !isPublicAddress(a))) {
            return yield* ValidationFailed.field("url", "resolves to a loopback, private, link-local or multicast address")
          }
        }
        return checked.url
      })

      /**
       * A fresh key of the scheme, sealed before any transaction opens: a `v1`
       * secret (shown once, as `secret`) or a `v1a` key pair (the private key
       * is sealed and never shown; `public_key` is). `stored` places it on its
       * subscription.
       */
      const newSecret = Effect.fnUntraced(function*(at: string, scheme: SigningScheme) {
        const generated = scheme === "v1"
          ? { secret: yield* Effect.provideContext(generateSecret, keyCrypto), public_key: null }
          : yield* Effect.map(Effect.provideContext(generateKeyPair, keyCrypto), (pair) => ({
            secret: pair.privateKey,
            public_key: pair.publicKey
          }))
        const id = yield* newId(ids, WebhookSecretId)
        const sealed = yield* box.seal(generated.secret, secretContext(id))
        return {
          shown: { secret: scheme === "v1" ? generated.secret : null, signing_scheme: scheme, public_key: generated.public_key },
          stored: (subscriptionId: WebhookSubscriptionId): StoredSecret => ({
            id,
            subscription_id: subscriptionId,
            scheme,
            sealed,
            public_key: generated.public_key,
            created_at: at,
            expires_at: null
          })
        }
      })

      /**
       * Test sends and redeliveries per minute per organization environment
       * (docs/decisions.md, "Limits and ranges"): each makes the worker POST
       * to a host of the tenant's choosing.
       */
      const perMinute = (tenant: Tenant, what: "tests" | "redeliveries") =>
        Effect.gen(function*() {
          const policy = what === "tests"
            ? { name: "webhook-tests", limit: settings.testsPerMinute, windowSeconds: 60 }
            : { name: "webhook-redeliveries", limit: settings.redeliveriesPerMinute, windowSeconds: 60 }
          const decision = yield* limiter.consume(`${policy.name}:${tenant.organizationId}:${tenant.environment}`, policy)
          if (decision.allowed) return
          return yield* new RateLimited({
            retryAfterSec: decision.resetSeconds,
            limit: policy.limit,
            windowSec: policy.windowSeconds,
            policy: what === "tests" ? "webhook test sends" : "webhook redeliveries"
          })
        })

      const findDelivery = (tenant: Tenant, id: string, deliveryId: string) =>
        (isSubscriptionId(id) && isDeliveryId(deliveryId)
          ? deliveries.find(tenant, id, deliveryId)
          : Effect.succeed(Option.none<WebhookDelivery>())).pipe(
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new NotFound({ resource: "webhook delivery", id: deliveryId })),
            onSome: Effect.succeed
          }))
        )

      return Webhooks.of({
        eventTypes: Effect.sync(() => catalog),
        create: Effect.fn("Webhooks.create")(function*(tenant, input) {
          const url = yield* checkUrl(tenant, input.url)
          const now = yield* nowMs
          const at = iso(now)
          const { shown, stored } = yield* newSecret(at, input.signing_scheme ?? "v1")
          const subscription: StoredSubscription = {
            id: yield* newId(ids, WebhookSubscriptionId),
            url,
            description: input.description ?? null,
            event_types: input.event_types,
            enabled: true,
            disabled_reason: null,
            signing_scheme: shown.signing_scheme,
            public_key: shown.public_key,
            created_at: at,
            updated_at: at,
            latest_secret_expiry: null
          }
          yield* tx.withTransaction(Effect.gen(function*() {
            if ((yield* repo.countLocked(tenant)) >= settings.maxSubscriptions) {
              return yield* new Conflict({
                reason: `This environment has ${settings.maxSubscriptions} webhook subscriptions, the most it may have; delete one first`
              })
            }
            yield* repo.insert(tenant, subscription)
            yield* repo.insertSecret(tenant, stored(subscription.id))
          }))
          return { ...toApi(subscription, now), secret: shown.secret }
        }),
        get: Effect.fn("Webhooks.get")(function*(tenant, id) {
          const row = yield* find(tenant, id)
          return toApi(row, yield* nowMs)
        }),
        list: Effect.fn("Webhooks.list")(function*(tenant, page) {
          const found = yield* repo.list(tenant, page)
          const now = yield* nowMs
          return { items: found.items.map((row) => toApi(row, now)), meta: found.meta }
        }),
        update: Effect.fn("Webhooks.update")(function*(tenant, id, patch) {
          const url = patch.url === undefined ? undefined : yield* checkUrl(tenant, patch.url)
          return yield* tx.withTransaction(Effect.gen(function*() {
            const current = yield* find(tenant, id)
            const now = yield* nowMs
            const enabled = patch.enabled ?? current.enabled
            const next: StoredSubscription = {
              ...current,
              url: url ?? current.url,
              event_types: patch.event_types ?? current.event_types,
              description: patch.description === undefined ? current.description : patch.description,
              enabled,
              disabled_reason: enabled ? null : patch.enabled === false ? "by_request" : current.disabled_reason,
              updated_at: iso(now)
            }
            yield* repo.update(tenant, next)
            // Deliveries that waited while the subscription was off are due again.
            if (enabled && !current.enabled) yield* tx.afterCommit(signal.notify)
            return toApi(next, now)
          }))
        }),
        remove: Effect.fn("Webhooks.remove")(function*(tenant, id) {
          const removed = isSubscriptionId(id) && (yield* repo.remove(tenant, id))
          if (!removed) return yield* new NotFound({ resource: "webhook subscription", id })
        }),
        rotateSecret: Effect.fn("Webhooks.rotateSecret")(function*(tenant, id, input) {
          const now = yield* nowMs
          const grace = input.grace_period_seconds ?? DEFAULT_ROTATION_GRACE_SECONDS
          // The key is made before the transaction; without a scheme asked for, it keeps the current one.
          const scheme = input.signing_scheme ?? (yield* find(tenant, id)).signing_scheme
          const { shown, stored } = yield* newSecret(iso(now), scheme)
          return yield* tx.withTransaction(Effect.gen(function*() {
            const current = yield* find(tenant, id)
            const retireAt = iso(now + grace * 1000)
            yield* repo.retireSecrets(tenant, current.id, retireAt, iso(now), MAX_RETIRING_SECRETS)
            yield* repo.insertSecret(tenant, stored(current.id))
            const row: StoredSubscription = {
              ...current,
              signing_scheme: shown.signing_scheme,
              public_key: shown.public_key,
              latest_secret_expiry: retireAt
            }
            return { ...toApi(row, now), secret: shown.secret }
          }))
        }),
        revealSecret: Effect.fn("Webhooks.revealSecret")(function*(tenant, id) {
          const subscription = yield* find(tenant, id)
          const active = yield* repo.activeSecrets(tenant, subscription.id, iso(yield* nowMs))
          const current = active.find((key) => key.expires_at === null) ?? active[0]
          if (current === undefined) return yield* new NotFound({ resource: "webhook secret", id })
          return {
            signing_scheme: current.scheme,
            secret: current.scheme === "v1" ? yield* box.open(current.sealed, secretContext(current.id)) : null,
            public_key: current.public_key
          }
        }),
        publicKeys: Effect.fn("Webhooks.publicKeys")(function*(tenant, id) {
          const subscription = yield* find(tenant, id)
          const active = yield* repo.activeSecrets(tenant, subscription.id, iso(yield* nowMs))
          return active.flatMap((key) =>
            key.scheme === "v1a" && key.public_key !== null
              ? [{ id: key.id, public_key: key.public_key, created_at: key.created_at, expires_at: key.expires_at }]
              : []
          )
        }),
        sendTest: Effect.fn("Webhooks.sendTest")(function*(tenant, id) {
          const subscription = yield* find(tenant, id)
          if (!subscription.enabled) {
            return yield* new Conflict({ reason: "This subscription is disabled; enable it before sending a test" })
          }
          yield* perMinute(tenant, "tests")
          const eventId = freshEventId(yield* ids.uuid)
          const sent = yield* publishTo(
            tenant,
            event("webhook.test", eventId, { subscription_id: subscription.id }),
            subscription.id
          ).pipe(
            Effect.provide(sendContext)
          )
          return yield* Option.match(sent, {
            onNone: () => Effect.fail(new NotFound({ resource: "webhook subscription", id })),
            onSome: ({ deliveryId, payload }) =>
              Effect.succeed({ event_id: eventId, delivery_id: deliveryId, payload: JSON.parse(payload) as Record<string, unknown> })
          })
        }),
        listDeliveries: Effect.fn("Webhooks.listDeliveries")(function*(tenant, id, filter, page) {
          const subscription = yield* find(tenant, id)
          return yield* deliveries.list(tenant, subscription.id, filter, page)
        }),
        getDelivery: (tenant, id, deliveryId) => findDelivery(tenant, id, deliveryId),
        listAttempts: Effect.fn("Webhooks.listAttempts")(function*(tenant, id, deliveryId, page) {
          const delivery = yield* findDelivery(tenant, id, deliveryId)
          return yield* deliveries.listAttempts(tenant, delivery.id, page)
        }),
        redeliver: Effect.fn("Webhooks.redeliver")(function*(tenant, id, deliveryId, input) {
          yield* perMinute(tenant, "redeliveries")
          return yield* tx.withTransaction(Effect.gen(function*() {
            const subscription = yield* find(tenant, id)
            const delivery = yield* findDelivery(tenant, id, deliveryId)
            if (!subscription.enabled) {
              return yield* new Conflict({ reason: "This subscription is disabled; enable it before redelivering" })
            }
            const decision = redeliverDecision(delivery.status, input.force ?? false)
            if (decision._tag === "Refuse") return yield* new Conflict({ reason: decision.reason })
            const moved = yield* deliveries.reset(tenant, delivery.id, delivery.status, iso(yield* nowMs))
            if (!moved) return yield* new Conflict({ reason: "The delivery changed while redelivering; try again" })
            yield* tx.afterCommit(signal.notify)
          }))
        })
      })
    })
  )
}
