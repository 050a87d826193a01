import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie } from "../shared/sql.ts"
import type { Tenant } from "../shared/tenant.ts"
import { toIso, toIsoOrNull } from "../shared/time.ts"
import { keysetPage } from "../shared/sqlPage.ts"
import type { Device, StoredCredential } from "./model.ts"

export interface CredentialFilter {
  readonly kind?: string | undefined
  readonly includeRevoked?: boolean | undefined
}

/** Storage port for credentials (hashes only) and wall-display devices. */
export class CredentialRepo extends Context.Service<CredentialRepo, {
  readonly insert: (credential: StoredCredential) => Effect.Effect<void>
  readonly findByHash: (tokenHash: string) => Effect.Effect<Option.Option<StoredCredential>>
  readonly find: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<StoredCredential>>
  /** Operator access: a credential by id, whatever its tenant. */
  readonly findById: (id: string) => Effect.Effect<Option.Option<StoredCredential>>
  readonly list: (tenant: Tenant, filter: CredentialFilter, page: PageRequest) => Effect.Effect<Page<StoredCredential>>
  readonly revoke: (tenant: Tenant, id: string, at: string) => Effect.Effect<Option.Option<StoredCredential>>
  /** Revokes every live credential of a grant; returns how many were revoked. */
  readonly revokeGrant: (grantId: string, at: string) => Effect.Effect<number>
  readonly touch: (id: string, at: string) => Effect.Effect<void>
  readonly insertDevice: (organizationId: string, device: Device) => Effect.Effect<void>
  readonly findDevice: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<Device>>
  readonly setDevicePin: (tenant: Tenant, id: string, pinHash: string | null) => Effect.Effect<boolean>
  readonly devicePinHash: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<string | null>>
}>()("@opsplatform/core/auth/CredentialRepo") {
  static readonly layerSql: Layer.Layer<CredentialRepo, never, SqlClient.SqlClient> = Layer.effect(
    CredentialRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const toCredential = (r: any): StoredCredential => ({
        id: r.id,
        organization_id: r.organization_id,
        environment: r.environment,
        kind: r.kind,
        name: r.name,
        token_hash: r.token_hash,
        token_prefix: r.token_prefix,
        scopes: String(r.scopes).split(" ").filter((s) => s !== ""),
        user_id: r.user_id,
        device_id: r.device_id,
        app_id: r.app_id,
        grant_id: r.grant_id,
        created_at: toIso(r.created_at),
        last_used_at: toIsoOrNull(r.last_used_at),
        expires_at: toIsoOrNull(r.expires_at),
        revoked_at: toIsoOrNull(r.revoked_at)
      })
      const toDevice = (r: any): Device => ({
        id: r.id,
        environment: r.environment,
        name: r.name,
        has_pin: r.pin_hash !== null,
        created_at: toIso(r.created_at)
      })
      const one = <A>(f: (r: any) => A) => (rows: ReadonlyArray<any>) => Option.map(Option.fromNullishOr(rows[0]), f)

      return CredentialRepo.of({
        insert: (c) =>
          orDie(sql`INSERT INTO credentials (id, organization_id, environment, kind, name, token_hash, token_prefix,
              scopes, user_id, device_id, app_id, grant_id, created_at, expires_at)
            VALUES (${c.id}, ${c.organization_id}, ${c.environment}, ${c.kind}, ${c.name}, ${c.token_hash},
              ${c.token_prefix}, ${c.scopes.join(" ")}, ${c.user_id}, ${c.device_id}, ${c.app_id}, ${c.grant_id},
              ${c.created_at}, ${c.expires_at})`).pipe(Effect.asVoid),
        findByHash: (hash) =>
          orDie(sql`SELECT * FROM credentials WHERE token_hash = ${hash}`).pipe(Effect.map(one(toCredential))),
        find: (tenant, id) =>
          orDie(sql`SELECT * FROM credentials WHERE id = ${id} AND organization_id = ${tenant.organizationId}
            AND environment = ${tenant.environment}`).pipe(Effect.map(one(toCredential))),
        findById: (id) =>
          orDie(sql`SELECT * FROM credentials WHERE id = ${id}`).pipe(Effect.map(one(toCredential))),
        list: (tenant, filter, page) =>
          keysetPage(sql, {
            table: "credentials",
            where: sql.and([
              sql`organization_id = ${tenant.organizationId}`,
              sql`environment = ${tenant.environment}`,
              filter.kind === undefined ? sql`TRUE` : sql`kind = ${filter.kind}`,
              filter.includeRevoked ? sql`TRUE` : sql`revoked_at IS NULL`
            ]),
            page,
            decode: toCredential
          }),
        revoke: (tenant, id, at) =>
          orDie(sql`UPDATE credentials SET revoked_at = COALESCE(revoked_at, ${at})
            WHERE id = ${id} AND organization_id = ${tenant.organizationId} AND environment = ${tenant.environment}
            RETURNING *`).pipe(Effect.map(one(toCredential))),
        revokeGrant: (grantId, at) =>
          orDie(sql`UPDATE credentials SET revoked_at = ${at} WHERE grant_id = ${grantId} AND revoked_at IS NULL
            RETURNING id`).pipe(Effect.map((rows) => rows.length)),
        touch: (id, at) =>
          orDie(sql`UPDATE credentials SET last_used_at = ${at} WHERE id = ${id}`).pipe(Effect.asVoid),
        insertDevice: (organizationId, d) =>
          orDie(sql`INSERT INTO devices (id, organization_id, environment, name, created_at)
            VALUES (${d.id}, ${organizationId}, ${d.environment}, ${d.name}, ${d.created_at})`).pipe(Effect.asVoid),
        findDevice: (tenant, id) =>
          orDie(sql`SELECT * FROM devices WHERE id = ${id} AND organization_id = ${tenant.organizationId}
            AND environment = ${tenant.environment}`).pipe(Effect.map(one(toDevice))),
        setDevicePin: (tenant, id, pinHash) =>
          orDie(sql`UPDATE devices SET pin_hash = ${pinHash} WHERE id = ${id}
            AND organization_id = ${tenant.organizationId} AND environment = ${tenant.environment} RETURNING id`).pipe(
            Effect.map((rows) => rows.length > 0)
          ),
        devicePinHash: (tenant, id) =>
          orDie(sql`SELECT pin_hash FROM devices WHERE id = ${id} AND organization_id = ${tenant.organizationId}
            AND environment = ${tenant.environment}`).pipe(Effect.map(one((r) => r.pin_hash as string | null)))
      })
    })
  )
}
