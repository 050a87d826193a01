import { Effect, Layer, Option } from "effect"
import { CredentialRepo } from "@opsplatform/core/auth/CredentialRepo"
import { CredentialFilter, type StoredCredential } from "@opsplatform/core/auth/model"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { MemoryStore } from "./MemoryStore.ts"
import { filterPredicates, memoryTenantTable } from "./rows.ts"

/**
 * The tenant table stamps `organization_id` and `environment` on each row and
 * strips them when it reads; a credential and a device show them, so they are
 * put back from the tenant the row was read in.
 */
type Unstamped<A> = Omit<A, "organization_id" | "environment">

export const CredentialRepoMemory: Layer.Layer<CredentialRepo, never, MemoryStore> = Layer.effect(
  CredentialRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const credentials = memoryTenantTable<Unstamped<StoredCredential>>(store, "credentials")
    // The display area's devices: a device token names one of them.
    const devices = memoryTenantTable<{ readonly id: string; readonly created_at: string; readonly deleted_at: string | null }>(
      store,
      "devices"
    )
    const credentialIn = (tenant: Tenant) => (c: Unstamped<StoredCredential>): StoredCredential => ({
      ...c,
      organization_id: tenant.organizationId,
      environment: tenant.environment
    })
    /** Every tenant's credentials, as stored (with their tenant). */
    const everyCredential = (): Array<StoredCredential> => [...credentials.rows.values()]
    const revoke = (tenant: Tenant, c: Unstamped<StoredCredential>, at: string) => {
      const next = { ...c, revoked_at: c.revoked_at ?? at }
      credentials.update(tenant, next)
      return credentialIn(tenant)(next)
    }
    return CredentialRepo.of({
      insert: (tenant, { environment: _e, organization_id: _o, ...c }) => Effect.sync(() => credentials.insert(tenant, c)),
      findByHash: (hash) => Effect.sync(() => Option.fromNullishOr(everyCredential().find((c) => c.token_hash === hash))),
      find: (tenant, id) => Effect.sync(() => Option.map(credentials.find(tenant, id), credentialIn(tenant))),
      findById: (id) => Effect.sync(() => Option.fromNullishOr(everyCredential().find((c) => c.id === id))),
      list: (tenant, filter, page) =>
        Effect.sync(() => {
          const listed = credentials.page(tenant, filterPredicates(CredentialFilter, filter), page)
          return { ...listed, items: listed.items.map(credentialIn(tenant)) }
        }),
      revoke: (tenant, id, at) => Effect.sync(() => Option.map(credentials.find(tenant, id), (c) => revoke(tenant, c, at))),
      revokeGrant: (grantId, at) =>
        Effect.sync(() => {
          const live = everyCredential().filter((c) => c.grant_id === grantId && c.revoked_at === null)
          for (const c of live) revoke({ organizationId: c.organization_id, environment: c.environment }, c, at)
          return live.length
        }),
      touch: (tenant, id, at) =>
        Effect.sync(() => {
          for (const c of Option.toArray(credentials.find(tenant, id))) credentials.update(tenant, { ...c, last_used_at: at })
        }),
      deviceExists: (tenant, deviceId) =>
        Effect.sync(() => Option.exists(devices.find(tenant, deviceId), (d) => d.deleted_at === null)),
      revokeDevice: (tenant, deviceId, at) =>
        Effect.sync(() =>
          credentials.filter(tenant, (c) => c.device_id === deviceId && c.revoked_at === null).map((c) => revoke(tenant, c, at))
        )
    })
  })
)
