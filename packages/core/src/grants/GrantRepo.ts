import { Context, Effect, Layer, type Option, Struct } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { NullableTimestamp, Timestamp } from "../shared/columns.ts"
import type { Conflict } from "../shared/errors.ts"
import type { Page, PageRequest } from "../shared/pagination.ts"
import { orDie, uniqueAsConflict } from "../shared/sql.ts"
import { filterConditions, type FindOptions, keysetPage, table } from "../shared/tables.ts"
import type { Tenant, TenantScoped } from "../shared/tenant.ts"
import { AccessGrantFilter, AccessGrantRecord, derivedFields } from "./model.ts"
import { sideOf } from "./rules.ts"

const openGrantExists = "A pending or active access grant with this counterparty already exists"

/** Both unique indexes of open grants answer alike, so a 409 never tells a known VAT number from an unknown one. */
export const grantConflicts = {
  access_grants_open_pair: openGrantExists,
  access_grants_open_request: openGrantExists
}

export const AccessGrantRow = AccessGrantRecord.mapFields(Struct.assign({
  created_at: Timestamp,
  approved_at: NullableTimestamp,
  revoked_at: NullableTimestamp
}))

/**
 * Storage port for access grants. A grant belongs to two organizations, so it
 * is one row with both sides, and every call's tenant sees the rows of its
 * environment where it is either side. The store guarantees at most one
 * pending or active grant between two organizations, and at most one open
 * request per VAT number from an organization, whatever the callers do.
 */
export class GrantRepo extends Context.Service<GrantRepo, TenantScoped<{
  readonly insert: (tenant: Tenant, grant: AccessGrantRecord) => Effect.Effect<void, Conflict>
  readonly find: (tenant: Tenant, id: string, options?: FindOptions) => Effect.Effect<Option.Option<AccessGrantRecord>>
  readonly list: (tenant: Tenant, filter: AccessGrantFilter, page: PageRequest) => Effect.Effect<Page<AccessGrantRecord>>
  /** Writes the grant's status and its approval and revocation times. */
  readonly update: (tenant: Tenant, grant: AccessGrantRecord) => Effect.Effect<void>
  /**
   * The grant through which the tenant, as the cabinet, reaches a client in
   * its environment: the active one, or else the latest of any status.
   */
  readonly findForClient: (tenant: Tenant, clientOrganizationId: string) => Effect.Effect<Option.Option<AccessGrantRecord>>
}>>()("@opsplatform/core/grants/GrantRepo") {
  static readonly layerSql: Layer.Layer<GrantRepo, never, SqlClient.SqlClient> = Layer.effect(
    GrantRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const conflicts = uniqueAsConflict(grantConflicts)
      const grants = table(sql, {
        name: "access_grants",
        row: AccessGrantRow,
        // Each side's current name and number, by primary key (a row reads them, never stores them).
        select: (sql) =>
          sql`access_grants.*,
            (SELECT o.name FROM organizations o WHERE o.id = access_grants.cabinet_organization_id) AS cabinet_name,
            (SELECT o.vat_number FROM organizations o WHERE o.id = access_grants.cabinet_organization_id) AS cabinet_vat_number,
            (SELECT o.name FROM organizations o WHERE o.id = access_grants.client_organization_id) AS client_name,
            (SELECT o.vat_number FROM organizations o WHERE o.id = access_grants.client_organization_id) AS client_vat_number`,
        readOnly: derivedFields,
        fixed: [
          "environment",
          "cabinet_organization_id",
          "client_organization_id",
          "requested_by",
          "requested_vat_number",
          "scope",
          "created_at"
        ]
      })
      /** The tenant's rule for this table: its environment, and the tenant on either side. */
      const where = (tenant: Tenant, conditions: ReadonlyArray<Statement.Fragment> = []) =>
        sql.and([
          sql`access_grants.environment = ${tenant.environment}`,
          sql`(access_grants.cabinet_organization_id = ${tenant.organizationId}
            OR access_grants.client_organization_id = ${tenant.organizationId})`,
          ...conditions
        ])
      return GrantRepo.of({
        insert: (tenant, grant) =>
          tenant.environment === grant.environment && sideOf(grant, tenant.organizationId) !== undefined
            ? conflicts(grants.insert(grant))
            : Effect.die(new Error("GrantRepo.insert: the tenant is not a side of the grant")),
        find: (tenant, id, options) =>
          grants.one(sql`SELECT ${grants.select} FROM ${grants.name} WHERE ${where(tenant, [sql`access_grants.id = ${id}`])}
            ${options?.forUpdate ? sql`FOR UPDATE` : sql``}`),
        list: (tenant, f, page) => {
          const conditions = filterConditions(sql, AccessGrantFilter, f, {
            role: (role) => sql`${sql(`${role}_organization_id`)} = ${tenant.organizationId}`
          })
          return keysetPage(sql, {
            table: grants.name,
            select: grants.select,
            where: where(tenant, conditions),
            page,
            all: grants.all,
            filtered: conditions.length > 0
          })
        },
        update: (tenant, grant) => orDie(grants.update(grant, where(tenant))).pipe(Effect.asVoid),
        findForClient: (tenant, client) =>
          grants.one(sql`SELECT ${grants.select} FROM ${grants.name}
            WHERE access_grants.environment = ${tenant.environment}
              AND access_grants.cabinet_organization_id = ${tenant.organizationId}
              AND access_grants.client_organization_id = ${client}
            ORDER BY access_grants.status = 'active' DESC, access_grants.created_at DESC, access_grants.id DESC
            LIMIT 1`)
      })
    })
  )
}
