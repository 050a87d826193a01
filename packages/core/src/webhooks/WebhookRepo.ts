import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie } from "../shared/sql.ts"
import { keysetPage } from "../shared/sqlPage.ts"
import type { Tenant } from "../shared/tenant.ts"
import { toIso, toIsoOrNull } from "../shared/time.ts"
import type { StoredSecret, StoredSubscription } from "./model.ts"

/** A subscription as read back, with when its latest rotated-out secret expires (if it had one). */
export interface SubscriptionRow extends StoredSubscription {
  readonly latest_secret_expiry: string | null
}

/**
 * Storage port for webhook subscriptions and their signing secrets (sealed).
 * A subscription has one current secret (`expires_at` null) and, after
 * rotations, older ones that stay valid until their `expires_at`.
 */
export class WebhookRepo extends Context.Service<WebhookRepo, {
  readonly insert: (subscription: StoredSubscription) => Effect.Effect<void>
  readonly update: (subscription: StoredSubscription) => Effect.Effect<void>
  readonly find: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<SubscriptionRow>>
  readonly list: (tenant: Tenant, page: PageRequest) => Effect.Effect<Page<SubscriptionRow>>
  readonly remove: (tenant: Tenant, id: string) => Effect.Effect<boolean>
  readonly insertSecret: (secret: StoredSecret) => Effect.Effect<void>
  /**
   * Rotation's storage half: every secret expires at `retireAt` at the latest
   * (the current one included), secrets already past `now` are deleted, and
   * only the `keep` newest remain.
   */
  readonly retireSecrets: (subscriptionId: string, retireAt: string, now: string, keep: number) => Effect.Effect<void>
  /** Secrets valid at `now`, newest first. */
  readonly activeSecrets: (subscriptionId: string, now: string) => Effect.Effect<ReadonlyArray<StoredSecret>>
}>()("@opsplatform/core/webhooks/WebhookRepo") {
  static readonly layerSql: Layer.Layer<WebhookRepo, never, SqlClient.SqlClient> = Layer.effect(
    WebhookRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const decode = (r: any): SubscriptionRow => ({
        id: r.id,
        tenant: { organizationId: r.organization_id, environment: r.environment },
        url: r.url,
        description: r.description,
        event_types: typeof r.event_types === "string" ? JSON.parse(r.event_types) : r.event_types,
        enabled: r.enabled,
        disabled_reason: r.disabled_reason,
        created_at: toIso(r.created_at),
        updated_at: toIso(r.updated_at),
        latest_secret_expiry: toIsoOrNull(r.latest_secret_expiry)
      })
      const tenantIs = (t: Tenant) => sql`organization_id = ${t.organizationId} AND environment = ${t.environment}`
      const select = sql`*, (SELECT max(w.expires_at) FROM webhook_secrets w
        WHERE w.subscription_id = webhook_subscriptions.id) AS latest_secret_expiry`
      const decodeSecret = (r: any): StoredSecret => ({
        id: r.id,
        subscription_id: r.subscription_id,
        sealed: r.sealed,
        created_at: toIso(r.created_at),
        expires_at: toIsoOrNull(r.expires_at)
      })

      return WebhookRepo.of({
        insert: (s) =>
          orDie(sql`INSERT INTO webhook_subscriptions (id, organization_id, environment, url, description, event_types,
              enabled, disabled_reason, created_at, updated_at)
            VALUES (${s.id}, ${s.tenant.organizationId}, ${s.tenant.environment}, ${s.url}, ${s.description},
              ${JSON.stringify(s.event_types)}::jsonb, ${s.enabled}, ${s.disabled_reason}, ${s.created_at}, ${s.updated_at})`)
            .pipe(Effect.asVoid),
        update: (s) =>
          orDie(sql`UPDATE webhook_subscriptions SET url = ${s.url}, description = ${s.description},
              event_types = ${JSON.stringify(s.event_types)}::jsonb, enabled = ${s.enabled},
              disabled_reason = ${s.disabled_reason}, updated_at = ${s.updated_at}
            WHERE id = ${s.id} AND ${tenantIs(s.tenant)}`).pipe(Effect.asVoid),
        find: (tenant, id) =>
          orDie(sql`SELECT ${select} FROM webhook_subscriptions WHERE id = ${id} AND ${tenantIs(tenant)}`).pipe(
            Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), decode))
          ),
        list: (tenant, page) => keysetPage(sql, { table: "webhook_subscriptions", where: tenantIs(tenant), page, decode, select }),
        remove: (tenant, id) =>
          orDie(sql`DELETE FROM webhook_subscriptions WHERE id = ${id} AND ${tenantIs(tenant)} RETURNING id`).pipe(
            Effect.map((rows) => rows.length > 0)
          ),
        insertSecret: (s) =>
          orDie(sql`INSERT INTO webhook_secrets (id, subscription_id, sealed, created_at, expires_at)
            VALUES (${s.id}, ${s.subscription_id}, ${s.sealed}, ${s.created_at}, ${s.expires_at})`).pipe(Effect.asVoid),
        retireSecrets: (subscriptionId, retireAt, now, keep) =>
          Effect.gen(function*() {
            yield* sql`DELETE FROM webhook_secrets WHERE subscription_id = ${subscriptionId} AND expires_at <= ${now}`
            yield* sql`UPDATE webhook_secrets SET expires_at = ${retireAt}
              WHERE subscription_id = ${subscriptionId} AND (expires_at IS NULL OR expires_at > ${retireAt})`
            yield* sql`DELETE FROM webhook_secrets WHERE id IN (
              SELECT id FROM webhook_secrets WHERE subscription_id = ${subscriptionId}
              ORDER BY created_at DESC, id DESC OFFSET ${keep})`
          }).pipe(orDie),
        activeSecrets: (subscriptionId, now) =>
          orDie(sql`SELECT * FROM webhook_secrets WHERE subscription_id = ${subscriptionId}
            AND (expires_at IS NULL OR expires_at > ${now}) ORDER BY created_at DESC, id DESC`).pipe(
            Effect.map((rows) => rows.map(decodeSecret))
          )
      })
    })
  )
}
