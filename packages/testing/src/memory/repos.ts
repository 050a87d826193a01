import { Effect, Layer, Option } from "effect"
import { CredentialRepo } from "@opsplatform/core/auth/CredentialRepo"
import type { Device, StoredCredential } from "@opsplatform/core/auth/model"
import type { Expense } from "@opsplatform/core/expenses/model"
import { ExpenseRepo } from "@opsplatform/core/expenses/ExpenseRepo"
import { locationConflicts, LocationRepo } from "@opsplatform/core/locations/LocationRepo"
import type { Location } from "@opsplatform/core/locations/model"
import { Conflict } from "@opsplatform/core/shared/errors"
import { pageFromArray } from "@opsplatform/core/shared/pagination"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import type { Member, Organization, User } from "@opsplatform/core/tenancy/model"
import { TenancyRepo } from "@opsplatform/core/tenancy/TenancyRepo"
import { MemoryStore } from "./MemoryStore.ts"
import { inTenant, keyOf, type Scoped } from "./rows.ts"

export const TenancyRepoMemory: Layer.Layer<TenancyRepo, never, MemoryStore> = Layer.effect(
  TenancyRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const orgs = store.table<Organization>("organizations")
    const users = store.table<User & { password_hash: string | null }>("users")
    const memberships = store.table<{ organization_id: string; user_id: string; role: Member["role"]; joined_at: string }>(
      "memberships"
    )
    const toMember = (m: { organization_id: string; user_id: string; role: Member["role"]; joined_at: string }): Member => {
      const u = users.get(m.user_id)!
      return { ...m, name: u.name, email: u.email }
    }
    return TenancyRepo.of({
      insertOrganization: (org) => Effect.sync(() => void orgs.set(org.id, org)),
      findOrganization: (id) => Effect.sync(() => Option.fromNullishOr(orgs.get(id))),
      updateOrganization: (id, patch) =>
        Effect.sync(() => {
          const org = orgs.get(id)
          if (!org) return Option.none()
          const next: Organization = {
            ...org,
            ...(patch.name !== undefined ? { name: patch.name } : {}),
            ...(patch.time_zone !== undefined ? { time_zone: patch.time_zone } : {}),
            ...(patch.escalation_delay_days !== undefined ? { escalation_delay_days: patch.escalation_delay_days } : {})
          }
          orgs.set(id, next)
          return Option.some(next)
        }),
      countOrganizations: Effect.sync(() => orgs.size),
      insertUser: (user, passwordHash) =>
        Effect.suspend(() => {
          const email = user.email.toLowerCase()
          if ([...users.values()].some((u) => u.email === email)) {
            return Effect.fail(new Conflict({ reason: `A user with the email ${user.email} already exists` }))
          }
          users.set(user.id, { ...user, email, password_hash: passwordHash })
          return Effect.void
        }),
      findUser: (id) =>
        Effect.sync(() =>
          Option.map(Option.fromNullishOr(users.get(id)), ({ password_hash: _, ...u }) => u)
        ),
      findUserByEmail: (email) =>
        Effect.sync(() => Option.fromNullishOr([...users.values()].find((u) => u.email === email.toLowerCase()))),
      setPasswordHash: (userId, hash) =>
        Effect.sync(() => {
          const u = users.get(userId)
          if (u) users.set(userId, { ...u, password_hash: hash })
        }),
      upsertMembership: (organizationId, userId, role, at) =>
        Effect.sync(() => {
          const key = `${organizationId}/${userId}`
          const existing = memberships.get(key)
          memberships.set(key, { organization_id: organizationId, user_id: userId, role, joined_at: existing?.joined_at ?? at })
        }),
      findMember: (organizationId, userId) =>
        Effect.sync(() => Option.map(Option.fromNullishOr(memberships.get(`${organizationId}/${userId}`)), toMember)),
      listMembers: (organizationId) =>
        Effect.sync(() =>
          [...memberships.values()].filter((m) => m.organization_id === organizationId).map(toMember).sort((a, b) =>
            a.joined_at === b.joined_at ? (a.user_id < b.user_id ? -1 : 1) : a.joined_at < b.joined_at ? -1 : 1
          )
        ),
      listOrganizationsOfUser: (userId) =>
        Effect.sync(() =>
          [...memberships.values()].filter((m) => m.user_id === userId).map((m) => orgs.get(m.organization_id)!)
            .sort((a, b) => (a.name === b.name ? (a.id < b.id ? -1 : 1) : a.name < b.name ? -1 : 1))
        )
    })
  })
)

export const CredentialRepoMemory: Layer.Layer<CredentialRepo, never, MemoryStore> = Layer.effect(
  CredentialRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const credentials = store.table<StoredCredential>("credentials")
    const devices = store.table<Scoped<Device> & { pin_hash: string | null }>("devices")
    const find = (tenant: Tenant, id: string) =>
      Option.filter(Option.fromNullishOr(credentials.get(id)), inTenant(tenant))
    const findDevice = (tenant: Tenant, id: string) =>
      Option.filter(Option.fromNullishOr(devices.get(id)), inTenant(tenant))
    const toDevice = ({ organization_id: _o, pin_hash, ...d }: Scoped<Device> & { pin_hash: string | null }): Device => ({
      ...d,
      has_pin: pin_hash !== null
    })
    return CredentialRepo.of({
      insert: (c) => Effect.sync(() => void credentials.set(c.id, c)),
      findByHash: (hash) => Effect.sync(() => Option.fromNullishOr([...credentials.values()].find((c) => c.token_hash === hash))),
      find: (tenant, id) => Effect.sync(() => find(tenant, id)),
      findById: (id) => Effect.sync(() => Option.fromNullishOr(credentials.get(id))),
      list: (tenant, filter, page) =>
        Effect.sync(() =>
          pageFromArray(
            page,
            [...credentials.values()].filter((c) =>
              inTenant(tenant)(c) && (filter.kind === undefined || c.kind === filter.kind) &&
              (filter.includeRevoked || c.revoked_at === null)
            ),
            keyOf
          )
        ),
      revoke: (tenant, id, at) =>
        Effect.sync(() =>
          Option.map(find(tenant, id), (c) => {
            const next = { ...c, revoked_at: c.revoked_at ?? at }
            credentials.set(id, next)
            return next
          })
        ),
      revokeGrant: (grantId, at) =>
        Effect.sync(() => {
          let n = 0
          for (const c of credentials.values()) {
            if (c.grant_id === grantId && c.revoked_at === null) {
              credentials.set(c.id, { ...c, revoked_at: at })
              n++
            }
          }
          return n
        }),
      touch: (id, at) =>
        Effect.sync(() => {
          const c = credentials.get(id)
          if (c) credentials.set(id, { ...c, last_used_at: at })
        }),
      insertDevice: (organizationId, d) =>
        Effect.sync(() => void devices.set(d.id, { ...d, organization_id: organizationId, pin_hash: null })),
      findDevice: (tenant, id) => Effect.sync(() => Option.map(findDevice(tenant, id), toDevice)),
      setDevicePin: (tenant, id, pinHash) =>
        Effect.sync(() =>
          Option.match(findDevice(tenant, id), {
            onNone: () => false,
            onSome: (d) => {
              devices.set(id, { ...d, pin_hash: pinHash })
              return true
            }
          })
        ),
      devicePinHash: (tenant, id) => Effect.sync(() => Option.map(findDevice(tenant, id), (d) => d.pin_hash))
    })
  })
)

export const LocationRepoMemory: Layer.Layer<LocationRepo, never, MemoryStore> = Layer.effect(
  LocationRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const rows = store.table<Scoped<Location>>("locations")
    const scoped = (tenant: Tenant, l: Location): Scoped<Location> => ({
      ...l,
      organization_id: tenant.organizationId,
      environment: tenant.environment
    })
    const plain = ({ environment: _e, organization_id: _o, ...l }: Scoped<Location>): Location => l
    // The same guarantees as the unique indexes of the SQL schema.
    const check = (tenant: Tenant, l: Location) => {
      for (const other of rows.values()) {
        if (other.id === l.id || !inTenant(tenant)(other)) continue
        if (l.is_primary && other.is_primary) return Effect.fail(new Conflict({ reason: locationConflicts.locations_one_primary }))
        if (l.code !== null && other.code !== null && l.code.toLowerCase() === other.code.toLowerCase()) {
          return Effect.fail(new Conflict({ reason: locationConflicts.locations_code_unique }))
        }
      }
      return Effect.void
    }
    return LocationRepo.of({
      insert: (tenant, l) => Effect.andThen(check(tenant, l), Effect.sync(() => void rows.set(l.id, scoped(tenant, l)))),
      update: (tenant, l) =>
        Effect.andThen(
          check(tenant, l),
          Effect.sync(() => {
            const current = rows.get(l.id)
            if (current && inTenant(tenant)(current)) rows.set(l.id, scoped(tenant, l))
          })
        ),
      find: (tenant, id) => Effect.sync(() => Option.map(Option.filter(Option.fromNullishOr(rows.get(id)), inTenant(tenant)), plain)),
      list: (tenant, filter, page) =>
        Effect.sync(() =>
          pageFromArray(
            page,
            [...rows.values()].filter((l) =>
              inTenant(tenant)(l) && (filter.vertical_type === undefined || l.vertical_type === filter.vertical_type) &&
              (filter.is_primary === undefined || l.is_primary === filter.is_primary)
            ).map(plain),
            keyOf
          )
        ),
      remove: (tenant, id) =>
        Effect.sync(() => {
          const current = rows.get(id)
          if (!current || !inTenant(tenant)(current)) return false
          rows.delete(id)
          for (const [key, e] of store.table<Scoped<Expense>>("expenses")) {
            if (e.location_id === id) store.table<Scoped<Expense>>("expenses").set(key, { ...e, location_id: null })
          }
          return true
        }),
      clearPrimary: (tenant, exceptId, at) =>
        Effect.sync(() => {
          for (const l of rows.values()) {
            if (inTenant(tenant)(l) && l.is_primary && l.id !== exceptId) rows.set(l.id, { ...l, is_primary: false, updated_at: at })
          }
        })
    })
  })
)

export const ExpenseRepoMemory: Layer.Layer<ExpenseRepo, never, MemoryStore> = Layer.effect(
  ExpenseRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const rows = store.table<Scoped<Expense>>("expenses")
    const plain = ({ environment: _e, organization_id: _o, ...e }: Scoped<Expense>): Expense => e
    const scoped = (tenant: Tenant, e: Expense): Scoped<Expense> => ({
      ...e,
      organization_id: tenant.organizationId,
      environment: tenant.environment
    })
    return ExpenseRepo.of({
      insert: (tenant, e) => Effect.sync(() => void rows.set(e.id, scoped(tenant, e))),
      update: (tenant, e) =>
        Effect.sync(() => {
          const current = rows.get(e.id)
          if (current && inTenant(tenant)(current)) rows.set(e.id, scoped(tenant, e))
        }),
      find: (tenant, id) => Effect.sync(() => Option.map(Option.filter(Option.fromNullishOr(rows.get(id)), inTenant(tenant)), plain)),
      list: (tenant, f, page) =>
        Effect.sync(() =>
          pageFromArray(
            page,
            [...rows.values()].filter((e) =>
              inTenant(tenant)(e) && (f.status === undefined || e.status === f.status) &&
              (f.category === undefined || e.category === f.category) &&
              (f.currency === undefined || e.currency === f.currency) &&
              (f.location_id === undefined || e.location_id === f.location_id) &&
              (f.date_from === undefined || e.expense_date >= f.date_from) &&
              (f.date_to === undefined || e.expense_date <= f.date_to)
            ).map(plain),
            keyOf
          )
        )
    })
  })
)
