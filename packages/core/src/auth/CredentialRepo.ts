import { Context, Effect, Layer, Option, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { NullableTimestamp, SpaceSeparated, Timestamp } from "../shared/columns.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie } from "../shared/sql.ts"
import { filterConditions, tenantTable } from "../shared/tables.ts"
import type { Tenant, TenantScoped } from "../shared/tenant.ts"
import { CredentialFilter, StoredCredential } from "./model.ts"

/** A stored credential: scopes as one space-separated text, times as timestamptz. */
export const CredentialRow = StoredCredential.mapFields(Struct.assign({
  scopes: SpaceSeparated,
  created_at: Timestamp,
  last_used_at: NullableTimestamp,
  expires_at: NullableTimestamp,
  revoked_at: NullableTimestamp
}))

/** Storage port for credentials (hashes only). */
export class CredentialRepo extends Context.Service<CredentialRepo, TenantScoped<{
  readonly insert: (tenant: Tenant, credential: StoredCredential) => Effect.Effect<void>
  /** Cross-tenant: authentication has only the token's hash, and the credential it finds names the tenant. */
  readonly findByHash: (tokenHash: string) => Effect.Effect<Option.Option<StoredCredential>>
  readonly find: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<StoredCredential>>
  /** Cross-tenant: the operator (CLI) revokes a credential by id, whatever its tenant. */
  readonly findById: (id: string) => Effect.Effect<Option.Option<StoredCredential>>
  readonly list: (tenant: Tenant, filter: CredentialFilter, page: PageRequest) => Effect.Effect<Page<StoredCredential>>
  readonly revoke: (tenant: Tenant, id: string, at: string) => Effect.Effect<Option.Option<StoredCredential>>
  /**
   * Revokes every live credential of an OAuth grant; returns how many were revoked.
   * Cross-tenant: the OAuth protocol names the grant by a replayed token's hash, or by its app when the app is deleted everywhere.
   */
  readonly revokeGrant: (grantId: string, at: string) => Effect.Effect<number>
  readonly touch: (tenant: Tenant, id: string, at: string) => Effect.Effect<void>
  /**
   * Whether the tenant has this wall display (and it is not deleted). The
   * display area owns devices (docs/decisions.md, "Wall displays"); a device
   * token names one, so issuing it reads this much of the display's table.
   */
  readonly deviceExists: (tenant: Tenant, deviceId: string) => Effect.Effect<boolean>
  /** Revokes every live token of a device; returns them as revoked. */
  readonly revokeDevice: (tenant: Tenant, deviceId: string, at: string) => Effect.Effect<ReadonlyArray<StoredCredential>>
}, "findByHash" | "findById" | "revokeGrant">>()("@opsplatform/core/auth/CredentialRepo") {
  static readonly layerSql: Layer.Layer<CredentialRepo, never, SqlClient.SqlClient> = Layer.effect(
    CredentialRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const credentials = tenantTable(sql, { name: "credentials", row: CredentialRow })

      return CredentialRepo.of({
        insert: (tenant, c) => orDie(credentials.insert(tenant, c)),
        findByHash: (hash) => credentials.one(sql`SELECT * FROM credentials WHERE token_hash = ${hash}`),
        find: (tenant, id) => credentials.findById(tenant, id),
        findById: (id) => credentials.one(sql`SELECT * FROM credentials WHERE id = ${id}`),
        list: (tenant, filter, page) =>
          credentials.page(tenant, filterConditions(sql, CredentialFilter, filter), page),
        revoke: (tenant, id, at) =>
          credentials.one(sql`UPDATE credentials SET revoked_at = COALESCE(revoked_at, ${at})
            WHERE ${credentials.where(tenant, [sql`id = ${id}`])} RETURNING *`),
        revokeGrant: (grantId, at) =>
          orDie(sql`UPDATE credentials SET revoked_at = ${at} WHERE grant_id = ${grantId} AND revoked_at IS NULL
            RETURNING id`).pipe(Effect.map((rows) => rows.length)),
        touch: (tenant, id, at) =>
          orDie(sql`UPDATE credentials SET last_used_at = ${at} WHERE ${credentials.where(tenant, [sql`id = ${id}`])}`)
            .pipe(Effect.asVoid),
        deviceExists: (tenant, deviceId) =>
          orDie(sql`SELECT 1 FROM devices WHERE organization_id = ${tenant.organizationId}
            AND environment = ${tenant.environment} AND id = ${deviceId} AND deleted_at IS NULL`)
            .pipe(Effect.map((rows) => rows.length > 0)),
        revokeDevice: (tenant, deviceId, at) =>
          credentials.all(sql`UPDATE credentials SET revoked_at = ${at}
            WHERE ${credentials.where(tenant, [sql`device_id = ${deviceId}`, sql`revoked_at IS NULL`])} RETURNING *`)
      })
    })
  )
}
