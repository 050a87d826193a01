import { Effect, Layer, Option, Struct } from "effect"
import { grantConflicts, GrantRepo } from "@opsplatform/core/grants/GrantRepo"
import { AccessGrantFilter, type AccessGrantRecord, derivedFields } from "@opsplatform/core/grants/model"
import { sideOf } from "@opsplatform/core/grants/rules"
import { Conflict } from "@opsplatform/core/shared/errors"
import { pageFromArray } from "@opsplatform/core/shared/pagination"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import type { Organization } from "@opsplatform/core/tenancy/model"
import { MemoryStore } from "./MemoryStore.ts"
import { filterPredicates, keyOf } from "./rows.ts"

type StoredGrant = Omit<AccessGrantRecord, (typeof derivedFields)[number]>

const isOpen = (g: StoredGrant) => g.status === "pending" || g.status === "active"
const requester = (g: StoredGrant) => g.requested_by === "cabinet" ? g.cabinet_organization_id : g.client_organization_id
const pairKey = (g: StoredGrant) =>
  g.cabinet_organization_id === null || g.client_organization_id === null
    ? undefined
    : [g.environment, ...[g.cabinet_organization_id, g.client_organization_id].sort()].join("/")

/**
 * The memory twin of the SQL grants: one row per grant, seen by the tenant on
 * either side in its environment; the sides' names and numbers read from the
 * organizations when a row is read; the two unique indexes of open grants.
 */
export const GrantRepoMemory: Layer.Layer<GrantRepo, never, MemoryStore> = Layer.effect(
  GrantRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const rows = store.table<StoredGrant>("access_grants")
    const orgs = store.table<Organization>("organizations")
    const withSides = (g: StoredGrant): AccessGrantRecord => {
      const cabinet = g.cabinet_organization_id === null ? undefined : orgs.get(g.cabinet_organization_id)
      const client = g.client_organization_id === null ? undefined : orgs.get(g.client_organization_id)
      return {
        ...g,
        cabinet_name: cabinet?.name ?? null,
        cabinet_vat_number: cabinet?.vat_number ?? null,
        client_name: client?.name ?? null,
        client_vat_number: client?.vat_number ?? null
      }
    }
    const visible = (tenant: Tenant) => (g: StoredGrant) =>
      g.environment === tenant.environment &&
      (g.cabinet_organization_id === tenant.organizationId || g.client_organization_id === tenant.organizationId)
    const clash = (g: StoredGrant) =>
      [...rows.values()].some((o) =>
        o.id !== g.id && isOpen(o) && o.environment === g.environment &&
        ((pairKey(g) !== undefined && pairKey(o) === pairKey(g)) ||
          (requester(o) === requester(g) && o.requested_vat_number === g.requested_vat_number))
      )
    return GrantRepo.of({
      insert: (tenant, grant) => {
        const stored = Struct.omit(grant, derivedFields)
        if (tenant.environment !== grant.environment || sideOf(grant, tenant.organizationId) === undefined) {
          return Effect.die(new Error("GrantRepo.insert: the tenant is not a side of the grant"))
        }
        return isOpen(stored) && clash(stored)
          ? Effect.fail(new Conflict({ reason: grantConflicts.access_grants_open_pair }))
          : Effect.sync(() => void rows.set(grant.id, stored))
      },
      find: (tenant, id) =>
        Effect.sync(() => Option.map(Option.filter(Option.fromNullishOr(rows.get(id)), visible(tenant)), withSides)),
      list: (tenant, f, page) =>
        Effect.sync(() => {
          const conditions = filterPredicates<typeof AccessGrantFilter, StoredGrant>(AccessGrantFilter, f, {
            role: (role) => (g: StoredGrant) =>
              (role === "cabinet" ? g.cabinet_organization_id : g.client_organization_id) === tenant.organizationId
          })
          return pageFromArray(
            page,
            [...rows.values()].filter(visible(tenant)).filter((g) => conditions.every((c) => c(g))).map(withSides),
            keyOf
          )
        }),
      update: (tenant, grant) =>
        Effect.sync(() => {
          const current = rows.get(grant.id)
          if (current === undefined || !visible(tenant)(current)) return
          rows.set(grant.id, { ...current, status: grant.status, approved_at: grant.approved_at, revoked_at: grant.revoked_at })
        }),
      findForClient: (tenant, client) =>
        Effect.sync(() => {
          const between = [...rows.values()].filter((g) =>
            g.environment === tenant.environment && g.cabinet_organization_id === tenant.organizationId &&
            g.client_organization_id === client
          ).sort((a, b) =>
            Number(b.status === "active") - Number(a.status === "active") ||
            Date.parse(b.created_at) - Date.parse(a.created_at) || (b.id < a.id ? -1 : b.id > a.id ? 1 : 0)
          )
          return Option.map(Option.fromNullishOr(between[0]), withSides)
        })
    })
  })
)
