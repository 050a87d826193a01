import { Context, Effect, Layer, Option, Schema, Struct } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { Timestamp } from "../shared/columns.ts"
import type { Conflict } from "../shared/errors.ts"
import { orDie, uniqueAsConflict } from "../shared/sql.ts"
import { table } from "../shared/tables.ts"
import {
  Member,
  type MemberRole,
  Membership,
  Organization,
  type OrganizationUpdate,
  type User,
  UserRecord
} from "./model.ts"

export const organizationConflicts = {
  organizations_vat_number_key: "Another organization already has this VAT number"
}

export const OrganizationRow = Organization.mapFields(Struct.assign({ created_at: Timestamp }))
export const UserRow = UserRecord.mapFields(Struct.assign({ created_at: Timestamp }))
/** A membership joined with its user's name and email. */
export const MemberRow = Member.mapFields(Struct.assign({ joined_at: Timestamp }))
export const MembershipRow = Membership.mapFields(Struct.assign({ joined_at: Timestamp }))

/**
 * Storage port for organizations, users and memberships. These are the
 * tenants themselves (and the people who act in them), so no call is scoped
 * by one.
 */
export class TenancyRepo extends Context.Service<TenancyRepo, {
  readonly insertOrganization: (org: Organization) => Effect.Effect<void>
  readonly findOrganization: (id: string) => Effect.Effect<Option.Option<Organization>>
  /** Fails with Conflict when the VAT number is another organization's. */
  readonly updateOrganization: (id: string, patch: OrganizationUpdate) => Effect.Effect<Option.Option<Organization>, Conflict>
  /** The organization holding a VAT number (as stored: digits, no `RO`). */
  readonly findOrganizationByVatNumber: (vatNumber: string) => Effect.Effect<Option.Option<Organization>>
  readonly countOrganizations: Effect.Effect<number>
  /** Fails with Conflict when the email is taken. */
  readonly insertUser: (user: User, passwordHash: string | null) => Effect.Effect<void, Conflict>
  readonly findUser: (id: string) => Effect.Effect<Option.Option<User>>
  readonly findUserByEmail: (email: string) => Effect.Effect<Option.Option<UserRecord>>
  readonly setPasswordHash: (userId: string, hash: string) => Effect.Effect<void>
  /** Adds or changes a membership. */
  readonly upsertMembership: (organizationId: string, userId: string, role: MemberRole, at: string) => Effect.Effect<void>
  readonly findMember: (organizationId: string, userId: string) => Effect.Effect<Option.Option<Member>>
  readonly listMembers: (organizationId: string) => Effect.Effect<ReadonlyArray<Member>>
  readonly listOrganizationsOfUser: (userId: string) => Effect.Effect<ReadonlyArray<Organization>>
}>()("@opsplatform/core/tenancy/TenancyRepo") {
  static readonly layerSql: Layer.Layer<TenancyRepo, never, SqlClient.SqlClient> = Layer.effect(
    TenancyRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const organizations = table(sql, { name: "organizations", row: OrganizationRow })
      const users = table(sql, { name: "users", row: UserRow })
      // Memberships are keyed by (organization, user), not by an id of their own, so they are read
      // and written through their row schemas here rather than through `table`. The ids arrive as
      // plain strings; encoding checks them against the row's id schemas.
      const decodeMembers = Schema.decodeUnknownEffect(Schema.Array(MemberRow))
      const encodeMembership = Schema.encodeUnknownEffect(MembershipRow)
      const members = (statement: Statement.Statement<unknown>) =>
        orDie(statement).pipe(Effect.flatMap((rows) => Effect.orDie(decodeMembers(rows))))
      const selectMembers = (conditions: ReadonlyArray<Statement.Fragment>) =>
        sql`SELECT m.*, u.name, u.email FROM memberships m JOIN users u ON u.id = m.user_id WHERE ${sql.and(conditions)}`
      const withoutHash = (user: UserRecord): User => Struct.omit(user, ["password_hash"])
      const findOrganization = (id: string) => organizations.one(sql`SELECT * FROM organizations WHERE id = ${id}`)

      return TenancyRepo.of({
        insertOrganization: (org) => orDie(organizations.insert(org)),
        findOrganization,
        updateOrganization: (id, patch) => {
          const changes = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined))
          return Object.keys(changes).length === 0
            ? findOrganization(id)
            : sql`UPDATE organizations SET ${sql.update(changes)} WHERE id = ${id} RETURNING id`.pipe(
              uniqueAsConflict(organizationConflicts),
              Effect.flatMap((rows) => rows.length === 0 ? Effect.succeedNone : findOrganization(id))
            )
        },
        findOrganizationByVatNumber: (vatNumber) =>
          organizations.one(sql`SELECT * FROM organizations WHERE vat_number = ${vatNumber}`),
        countOrganizations: orDie(sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM organizations`).pipe(
          Effect.map((rows) => rows[0]?.n ?? 0)
        ),
        insertUser: (user, passwordHash) =>
          users.insert({ ...user, email: user.email.toLowerCase(), password_hash: passwordHash }).pipe(
            uniqueAsConflict({ users_email_key: `A user with the email ${user.email} already exists` })
          ),
        findUser: (id) =>
          users.one(sql`SELECT * FROM users WHERE id = ${id}`).pipe(Effect.map(Option.map(withoutHash))),
        findUserByEmail: (email) => users.one(sql`SELECT * FROM users WHERE email = ${email.toLowerCase()}`),
        setPasswordHash: (userId, hash) =>
          orDie(sql`UPDATE users SET password_hash = ${hash} WHERE id = ${userId}`).pipe(Effect.asVoid),
        upsertMembership: (organizationId, userId, role, at) =>
          Effect.flatMap(
            Effect.orDie(encodeMembership({ organization_id: organizationId, user_id: userId, role, joined_at: at })),
            (row) =>
              orDie(sql`INSERT INTO memberships ${sql.insert(row)}
                ON CONFLICT (organization_id, user_id) DO UPDATE SET role = EXCLUDED.role`)
          ).pipe(Effect.asVoid),
        findMember: (organizationId, userId) =>
          members(selectMembers([sql`m.organization_id = ${organizationId}`, sql`m.user_id = ${userId}`])).pipe(
            Effect.map((rows) => Option.fromNullishOr(rows[0]))
          ),
        listMembers: (organizationId) =>
          members(sql`${selectMembers([sql`m.organization_id = ${organizationId}`])} ORDER BY m.joined_at, u.id`),
        listOrganizationsOfUser: (userId) =>
          organizations.all(sql`SELECT o.* FROM organizations o JOIN memberships m ON m.organization_id = o.id
            WHERE m.user_id = ${userId} ORDER BY o.name, o.id`)
      })
    })
  )
}
