import { Context, Effect, Layer, type Option, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { Json, NullableTimestamp, Timestamp } from "../shared/columns.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie } from "../shared/sql.ts"
import { table, tenantTable } from "../shared/tables.ts"
import type { Tenant, TenantScoped } from "../shared/tenant.ts"
import { StoredSecret, StoredSubscription, type WebhookSubscriptionId } from "./model.ts"

/** A stored subscription: its event types as jsonb, its timestamps as timestamptz. */
export const SubscriptionRow = StoredSubscription.mapFields(Struct.assign({
  event_types: Json(StoredSubscription.fields.event_types),
  created_at: Timestamp,
  updated_at: Timestamp,
  latest_secret_expiry: NullableTimestamp
}))

export const SecretRow = StoredSecret.mapFields(Struct.assign({ created_at: Timestamp, expires_at: NullableTimestamp }))

/** A column of the subscription's current key (the newest one without an expiry). */
const currentKey = (sql: SqlClient.SqlClient, column: "scheme" | "public_key") =>
  sql`(SELECT w.${sql(column)} FROM webhook_secrets w
    WHERE w.subscription_id = webhook_subscriptions.id AND w.expires_at IS NULL
    ORDER BY w.created_at DESC, w.id DESC LIMIT 1)`

/**
 * Storage port for webhook subscriptions and their signing keys: `v1`
 * secrets and `v1a` private keys, sealed, with a `v1a` key's public key.
 * A subscription has one current key (`expires_at` null), whose scheme is
 * the subscription's, and, after rotations, older ones (of either scheme)
 * that stay valid until their `expires_at`. Secrets
 * carry no tenant of their own: each is reached through its subscription, so
 * a secret of another tenant's subscription is neither read nor written.
 */
export class WebhookRepo extends Context.Service<WebhookRepo, TenantScoped<{
  readonly insert: (tenant: Tenant, subscription: StoredSubscription) => Effect.Effect<void>
  /** Writes the tenant's subscription with this id; a subscription of another tenant is left alone. */
  readonly update: (tenant: Tenant, subscription: StoredSubscription) => Effect.Effect<void>
  readonly find: (tenant: Tenant, id: WebhookSubscriptionId) => Effect.Effect<Option.Option<StoredSubscription>>
  readonly list: (tenant: Tenant, page: PageRequest) => Effect.Effect<Page<StoredSubscription>>
  readonly remove: (tenant: Tenant, id: WebhookSubscriptionId) => Effect.Effect<boolean>
  /** The tenant's subscriptions; inside a transaction, under a lock that makes a cap hold under concurrent creates. */
  readonly countLocked: (tenant: Tenant) => Effect.Effect<number>
  /** Adds a secret to the tenant's subscription; nothing when the subscription is not the tenant's. */
  readonly insertSecret: (tenant: Tenant, secret: StoredSecret) => Effect.Effect<void>
  /**
   * Rotation's storage half: every secret expires at `retireAt` at the latest
   * (the current one included), secrets already past `now` are deleted, and
   * only the `keep` newest remain.
   */
  readonly retireSecrets: (
    tenant: Tenant,
    subscriptionId: WebhookSubscriptionId,
    retireAt: string,
    now: string,
    keep: number
  ) => Effect.Effect<void>
  /** Secrets valid at `now`, newest first. */
  readonly activeSecrets: (
    tenant: Tenant,
    subscriptionId: WebhookSubscriptionId,
    now: string
  ) => Effect.Effect<ReadonlyArray<StoredSecret>>
}>>()("@opsplatform/core/webhooks/WebhookRepo") {
  static readonly layerSql: Layer.Layer<WebhookRepo, never, SqlClient.SqlClient> = Layer.effect(
    WebhookRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const subscriptions = tenantTable(sql, {
        name: "webhook_subscriptions",
        row: SubscriptionRow,
        select: (sql) =>
          sql`*, (SELECT max(w.expires_at) FROM webhook_secrets w
            WHERE w.subscription_id = webhook_subscriptions.id) AS latest_secret_expiry,
            COALESCE(${currentKey(sql, "scheme")}, 'v1') AS signing_scheme,
            ${currentKey(sql, "public_key")} AS public_key`,
        readOnly: ["latest_secret_expiry", "signing_scheme", "public_key"],
        fixed: ["created_at"]
      })
      const secrets = table(sql, { name: "webhook_secrets", row: SecretRow })
      /** The secrets of one subscription, if it is the tenant's. */
      const secretsOf = (tenant: Tenant, subscriptionId: WebhookSubscriptionId) =>
        sql`subscription_id IN (SELECT id FROM webhook_subscriptions
          WHERE ${subscriptions.where(tenant, [sql`id = ${subscriptionId}`])})`

      return WebhookRepo.of({
        insert: (tenant, s) => orDie(subscriptions.insert(tenant, s)),
        update: (tenant, s) => orDie(subscriptions.update(tenant, s)).pipe(Effect.asVoid),
        find: (tenant, id) => subscriptions.findById(tenant, id),
        list: (tenant, page) => subscriptions.page(tenant, [], page),
        remove: (tenant, id) => Effect.map(subscriptions.remove(tenant, [sql`id = ${id}`]), (n) => n > 0),
        countLocked: subscriptions.countLocked,
        insertSecret: (tenant, s) =>
          Effect.flatMap(
            orDie(sql`SELECT 1 FROM webhook_subscriptions WHERE ${subscriptions.where(tenant, [sql`id = ${s.subscription_id}`])}`),
            (owner) => owner.length === 0 ? Effect.void : orDie(secrets.insert(s))
          ),
        retireSecrets: (tenant, subscriptionId, retireAt, now, keep) =>
          Effect.gen(function*() {
            const mine = secretsOf(tenant, subscriptionId)
            yield* sql`DELETE FROM webhook_secrets WHERE ${mine} AND expires_at <= ${now}`
            yield* sql`UPDATE webhook_secrets SET expires_at = ${retireAt}
              WHERE ${mine} AND (expires_at IS NULL OR expires_at > ${retireAt})`
            yield* sql`DELETE FROM webhook_secrets WHERE id IN (
              SELECT id FROM webhook_secrets WHERE ${mine} ORDER BY created_at DESC, id DESC OFFSET ${keep})`
          }).pipe(orDie),
        activeSecrets: (tenant, subscriptionId, now) =>
          secrets.all(sql`SELECT * FROM webhook_secrets WHERE ${secretsOf(tenant, subscriptionId)}
            AND (expires_at IS NULL OR expires_at > ${now}) ORDER BY created_at DESC, id DESC`)
      })
    })
  )
}
