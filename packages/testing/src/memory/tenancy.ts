import { Effect, Layer, Option, Schema, Struct } from "effect"
import { Conflict } from "@opsplatform/core/shared/errors"
import { type Member, Membership, type Organization, type UserRecord } from "@opsplatform/core/tenancy/model"
import { organizationConflicts, TenancyRepo } from "@opsplatform/core/tenancy/TenancyRepo"
import { MemoryStore } from "./MemoryStore.ts"

/** Memberships are checked like the SQL layer's writes: the ids must be ids. */
const membership = Schema.decodeUnknownSync(Membership)

export const TenancyRepoMemory: Layer.Layer<TenancyRepo, never, MemoryStore> = Layer.effect(
  TenancyRepo,
  Effect.gen(function*() {
    const store = yield* MemoryStore
    const orgs = store.table<Organization>("organizations")
    const users = store.table<UserRecord>("users")
    const memberships = store.table<Membership>("memberships")
    const toMember = (m: Membership): Member => {
      const u = users.get(m.user_id)!
      return { ...m, name: u.name, email: u.email }
    }
    return TenancyRepo.of({
      insertOrganization: (org) => Effect.sync(() => void orgs.set(org.id, org)),
      findOrganization: (id) => Effect.sync(() => Option.fromNullishOr(orgs.get(id))),
      updateOrganization: (id, patch) =>
        Effect.suspend(() => {
          const org = orgs.get(id)
          if (!org) return Effect.succeedNone
          // The unique index of the SQL schema: one organization per VAT number.
          const vat = patch.vat_number
          if (typeof vat === "string" && [...orgs.values()].some((o) => o.id !== id && o.vat_number === vat)) {
            return Effect.fail(new Conflict({ reason: organizationConflicts.organizations_vat_number_key }))
          }
          const changes = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined))
          const next: Organization = { ...org, ...changes }
          orgs.set(id, next)
          return Effect.succeedSome(next)
        }),
      findOrganizationByVatNumber: (vatNumber) =>
        Effect.sync(() => Option.fromNullishOr([...orgs.values()].find((o) => o.vat_number === vatNumber))),
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
        Effect.sync(() => Option.map(Option.fromNullishOr(users.get(id)), (u) => Struct.omit(u, ["password_hash"]))),
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
          memberships.set(
            key,
            membership({ organization_id: organizationId, user_id: userId, role, joined_at: existing?.joined_at ?? at })
          )
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
