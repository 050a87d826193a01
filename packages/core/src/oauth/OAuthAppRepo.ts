import { Context, Effect, Layer, type Option, Schema, Struct } from "effect"
import { SqlClient } from "effect/sql"
import { Json, NullableTimestamp, SpaceSeparated, Timestamp } from "../shared/columns.ts"
import type { Conflict } from "../shared/errors.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie, uniqueAsConflict } from "../shared/sql.ts"
import { table, tenantTable } from "../shared/tables.ts"
import type { Tenant, TenantScoped } from "../shared/tenant.ts"
import { GrantType, StoredApp, StoredInstallation } from "./model.ts"

export const appConflicts = {
  oauth_apps_client_id_key: "Another app already uses this client id",
  oauth_installations_app_tenant_key: "The app is already installed in this organization environment"
}

/** A stored app: redirect URIs as jsonb, scopes and grant types as space-separated text. */
export const StoredAppRow = StoredApp.mapFields(Struct.assign({
  redirect_uris: Json(Schema.Array(Schema.String)),
  scopes: SpaceSeparated,
  grant_types: SpaceSeparated.pipe(Schema.decodeTo(Schema.Array(GrantType))),
  secret_rotated_at: NullableTimestamp,
  verified_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp
}))

export const InstallationRow = StoredInstallation.mapFields(Struct.assign({ scopes: SpaceSeparated, created_at: Timestamp }))

/** What the protocol reads across organizations, each for the reason given. */
type AppCrossTenant =
  /** The consent page shows the app of a pending request, which names no organization. */
  | "findAppById"
  /** Client authentication, authorize requests and installation find any organization's app by its public client id. */
  | "findAppByClientId"
  /** An organization's installations name apps that other organizations own. */
  | "findAppsByIds"
  /** client_credentials chooses among the app's installations in every organization. */
  | "installationsOfApp"
  /** The operator verifies any organization's app. */
  | "setAppVerified"

/**
 * Storage port for OAuth apps and their installations. An app is managed
 * through the organization environment that owns it; the protocol reads apps
 * of every organization by client id or id.
 */
export class OAuthAppRepo extends Context.Service<OAuthAppRepo, TenantScoped<{
  /** `owner` null: an operator's app, registered from the CLI, which belongs to no organization. */
  readonly insertApp: (owner: Tenant | null, app: StoredApp) => Effect.Effect<void, Conflict>
  readonly updateApp: (owner: Tenant, app: StoredApp) => Effect.Effect<void>
  /** The app when `owner` owns it; an operator's app (no owner) is never found this way. */
  readonly findOwnedApp: (owner: Tenant, id: string) => Effect.Effect<Option.Option<StoredApp>>
  readonly findAppById: (id: string) => Effect.Effect<Option.Option<StoredApp>>
  readonly findAppByClientId: (clientId: string) => Effect.Effect<Option.Option<StoredApp>>
  readonly findAppsByIds: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<StoredApp>>
  readonly listOwnedApps: (owner: Tenant, page: PageRequest) => Effect.Effect<Page<StoredApp>>
  readonly deleteApp: (owner: Tenant, id: string) => Effect.Effect<boolean>
  /** Marks the app verified at `at`, or not verified (null); None when no app has the client id. */
  readonly setAppVerified: (clientId: string, at: string | null) => Effect.Effect<Option.Option<StoredApp>>
  readonly insertInstallation: (tenant: Tenant, installation: StoredInstallation) => Effect.Effect<void, Conflict>
  readonly findInstallation: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<StoredInstallation>>
  readonly listInstallations: (tenant: Tenant, page: PageRequest) => Effect.Effect<Page<StoredInstallation>>
  /** Every installation of the app, oldest first. */
  readonly installationsOfApp: (appId: string) => Effect.Effect<ReadonlyArray<StoredInstallation>>
  readonly deleteInstallation: (tenant: Tenant, id: string) => Effect.Effect<Option.Option<StoredInstallation>>
}, AppCrossTenant>>()("@opsplatform/core/oauth/OAuthAppRepo") {
  static readonly layerSql: Layer.Layer<OAuthAppRepo, never, SqlClient.SqlClient> = Layer.effect(
    OAuthAppRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const conflicts = uniqueAsConflict(appConflicts)
      // The client id and the type of an app never change (a public app never gets a secret); only the operator verifies.
      const options = { name: "oauth_apps", row: StoredAppRow, fixed: ["client_id", "type", "created_at", "verified_at"] } as const
      const apps = table(sql, options)
      const ownedApps = tenantTable(sql, options)
      const installations = tenantTable(sql, { name: "oauth_installations", row: InstallationRow })
      const anyInstallation = table(sql, { name: "oauth_installations", row: InstallationRow })

      return OAuthAppRepo.of({
        insertApp: (owner, app) => conflicts(owner === null ? apps.insert(app) : ownedApps.insert(owner, app)),
        updateApp: (owner, app) => orDie(ownedApps.update(owner, app)).pipe(Effect.asVoid),
        findOwnedApp: (owner, id) => ownedApps.findById(owner, id),
        findAppById: (id) => apps.one(sql`SELECT * FROM oauth_apps WHERE id = ${id}`),
        findAppByClientId: (clientId) => apps.one(sql`SELECT * FROM oauth_apps WHERE client_id = ${clientId}`),
        findAppsByIds: (ids) =>
          ids.length === 0 ? Effect.succeed([]) : apps.all(sql`SELECT * FROM oauth_apps WHERE ${sql.in("id", ids)}`),
        listOwnedApps: (owner, page) => ownedApps.page(owner, [], page),
        deleteApp: (owner, id) => Effect.map(ownedApps.remove(owner, [sql`id = ${id}`]), (n) => n > 0),
        setAppVerified: (clientId, at) =>
          apps.one(sql`UPDATE oauth_apps SET verified_at = ${at} WHERE client_id = ${clientId} RETURNING *`),
        insertInstallation: (tenant, installation) => conflicts(installations.insert(tenant, installation)),
        findInstallation: (tenant, id) => installations.findById(tenant, id),
        listInstallations: (tenant, page) => installations.page(tenant, [], page),
        installationsOfApp: (appId) =>
          anyInstallation.all(sql`SELECT * FROM oauth_installations WHERE app_id = ${appId} ORDER BY created_at, id`),
        deleteInstallation: (tenant, id) =>
          installations.one(
            sql`DELETE FROM oauth_installations WHERE ${installations.where(tenant, [sql`id = ${id}`])} RETURNING *`
          )
      })
    })
  )
}
