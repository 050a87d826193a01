import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Conflict } from "../shared/errors.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { firstRow, orDie, spaceSeparated, uniqueAsConflict } from "../shared/sql.ts"
import { keysetPage } from "../shared/sqlPage.ts"
import type { Tenant } from "../shared/tenant.ts"
import { toIso, toIsoOrNull } from "../shared/time.ts"
import type { GrantType, StoredApp, StoredInstallation } from "./model.ts"

export const appConflicts = {
  oauth_apps_client_id_key: "Another app already uses this client id",
  oauth_installations_app_tenant_key: "The app is already installed in this organization environment"
}

/**
 * Storage port for OAuth apps and their installations. Apps are read by their
 * owner (an organization environment) through the tenant, or by id / client id
 * for the protocol, which serves every organization.
 */
export class OAuthAppRepo extends Context.Service<OAuthAppRepo, {
  readonly insertApp: (app: StoredApp) => Effect.Effect<void, Conflict>
  readonly updateApp: (app: StoredApp) => Effect.Effect<void>
  /** The app when `owner` owns it; an operator's app (no owner) is never found this way. */
  readonly findOwnedApp: (owner: Tenant, id: string) => Effect.Effect<Option.Option<StoredApp>>
  readonly findAppById: (id: string) => Effect.Effect<Option.Option<StoredApp>>
  readonly findAppByClientId: (clientId: string) => Effect.Effect<Option.Option<StoredApp>>
  readonly findAppsByIds: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<StoredApp>>
  readonly listOwnedApps: (owner: Tenant, page: PageRequest) => Effect.Effect<Page<StoredApp>>
  readonly deleteApp: (id: string) => Effect.Effect<boolean>
  readonly insertInstallation: (installation: StoredInstallation) => Effect.Effect<void, Conflict>
  readonly findInstallation: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<StoredInstallation>>
  readonly listInstallations: (tenant: Tenant, page: PageRequest) => Effect.Effect<Page<StoredInstallation>>
  readonly installationsOfApp: (appId: string) => Effect.Effect<ReadonlyArray<StoredInstallation>>
  readonly deleteInstallation: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<StoredInstallation>>
}>()("@opsplatform/core/oauth/OAuthAppRepo") {
  static readonly layerSql: Layer.Layer<OAuthAppRepo, never, SqlClient.SqlClient> = Layer.effect(
    OAuthAppRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const conflicts = uniqueAsConflict(appConflicts)
      const toApp = (r: any): StoredApp => ({
        id: r.id,
        client_id: r.client_id,
        organization_id: r.organization_id,
        environment: r.environment,
        name: r.name,
        type: r.type,
        redirect_uris: typeof r.redirect_uris === "string" ? JSON.parse(r.redirect_uris) : r.redirect_uris,
        scopes: spaceSeparated(r.scopes),
        grant_types: spaceSeparated(r.grant_types) as Array<GrantType>,
        secret_hash: r.secret_hash,
        secret_prefix: r.secret_prefix,
        secret_rotated_at: toIsoOrNull(r.secret_rotated_at),
        created_at: toIso(r.created_at),
        updated_at: toIso(r.updated_at)
      })
      const toInstallation = (r: any): StoredInstallation => ({
        id: r.id,
        app_id: r.app_id,
        organization_id: r.organization_id,
        environment: r.environment,
        scopes: spaceSeparated(r.scopes),
        created_at: toIso(r.created_at)
      })
      const tenantIs = (t: Tenant) => sql`organization_id = ${t.organizationId} AND environment = ${t.environment}`

      return OAuthAppRepo.of({
        insertApp: (a) =>
          conflicts(sql`INSERT INTO oauth_apps (id, client_id, organization_id, environment, name, type, redirect_uris,
              scopes, grant_types, secret_hash, secret_prefix, secret_rotated_at, created_at, updated_at)
            VALUES (${a.id}, ${a.client_id}, ${a.organization_id}, ${a.environment}, ${a.name}, ${a.type},
              ${JSON.stringify(a.redirect_uris)}::jsonb, ${a.scopes.join(" ")}, ${a.grant_types.join(" ")},
              ${a.secret_hash}, ${a.secret_prefix}, ${a.secret_rotated_at}, ${a.created_at}, ${a.updated_at})`).pipe(
            Effect.asVoid
          ),
        updateApp: (a) =>
          orDie(sql`UPDATE oauth_apps SET name = ${a.name}, redirect_uris = ${JSON.stringify(a.redirect_uris)}::jsonb,
              scopes = ${a.scopes.join(" ")}, grant_types = ${a.grant_types.join(" ")}, secret_hash = ${a.secret_hash},
              secret_prefix = ${a.secret_prefix}, secret_rotated_at = ${a.secret_rotated_at}, updated_at = ${a.updated_at}
            WHERE id = ${a.id}`).pipe(Effect.asVoid),
        findOwnedApp: (owner, id) =>
          orDie(sql`SELECT * FROM oauth_apps WHERE id = ${id} AND ${tenantIs(owner)}`).pipe(Effect.map(firstRow(toApp))),
        findAppById: (id) => orDie(sql`SELECT * FROM oauth_apps WHERE id = ${id}`).pipe(Effect.map(firstRow(toApp))),
        findAppByClientId: (clientId) =>
          orDie(sql`SELECT * FROM oauth_apps WHERE client_id = ${clientId}`).pipe(Effect.map(firstRow(toApp))),
        findAppsByIds: (ids) =>
          ids.length === 0
            ? Effect.succeed([])
            : orDie(sql`SELECT * FROM oauth_apps WHERE ${sql.in("id", ids)}`).pipe(Effect.map((rows) => rows.map(toApp))),
        listOwnedApps: (owner, page) => keysetPage(sql, { table: "oauth_apps", where: tenantIs(owner), page, decode: toApp }),
        deleteApp: (id) =>
          orDie(sql`DELETE FROM oauth_apps WHERE id = ${id} RETURNING id`).pipe(Effect.map((rows) => rows.length > 0)),
        insertInstallation: (i) =>
          conflicts(sql`INSERT INTO oauth_installations (id, app_id, organization_id, environment, scopes, created_at)
            VALUES (${i.id}, ${i.app_id}, ${i.organization_id}, ${i.environment}, ${i.scopes.join(" ")},
              ${i.created_at})`).pipe(Effect.asVoid),
        findInstallation: (tenant, id) =>
          orDie(sql`SELECT * FROM oauth_installations WHERE id = ${id} AND ${tenantIs(tenant)}`).pipe(
            Effect.map(firstRow(toInstallation))
          ),
        listInstallations: (tenant, page) =>
          keysetPage(sql, { table: "oauth_installations", where: tenantIs(tenant), page, decode: toInstallation }),
        installationsOfApp: (appId) =>
          orDie(sql`SELECT * FROM oauth_installations WHERE app_id = ${appId} ORDER BY created_at, id`).pipe(
            Effect.map((rows) => rows.map(toInstallation))
          ),
        deleteInstallation: (tenant, id) =>
          orDie(sql`DELETE FROM oauth_installations WHERE id = ${id} AND ${tenantIs(tenant)} RETURNING *`).pipe(
            Effect.map(firstRow(toInstallation))
          )
      })
    })
  )
}
