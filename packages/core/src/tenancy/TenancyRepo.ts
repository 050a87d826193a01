import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { Conflict } from "../shared/errors.ts"
import { orDie, uniqueAsConflict } from "../shared/sql.ts"
import { toIso } from "../shared/time.ts"
import type { Member, MemberRole, Organization, User } from "./model.ts"

export interface OrganizationSettingsPatch {
  readonly time_zone?: string | undefined
  readonly escalation_delay_days?: number | undefined
  readonly name?: string | undefined
}

/** Storage port for organizations, users and memberships. */
export class TenancyRepo extends Context.Service<TenancyRepo, {
  readonly insertOrganization: (org: Organization) => Effect.Effect<void>
  readonly findOrganization: (id: string) => Effect.Effect<Option.Option<Organization>>
  readonly updateOrganization: (id: string, patch: OrganizationSettingsPatch) => Effect.Effect<Option.Option<Organization>>
  readonly countOrganizations: Effect.Effect<number>
  /** Fails with Conflict when the email is taken. */
  readonly insertUser: (user: User, passwordHash: string | null) => Effect.Effect<void, Conflict>
  readonly findUser: (id: string) => Effect.Effect<Option.Option<User>>
  readonly findUserByEmail: (email: string) => Effect.Effect<Option.Option<User & { readonly password_hash: string | null }>>
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

      const toOrganization = (r: any): Organization => ({
        id: r.id,
        name: r.name,
        time_zone: r.time_zone,
        escalation_delay_days: Number(r.escalation_delay_days),
        created_at: toIso(r.created_at)
      })
      const toUser = (r: any): User => ({ id: r.id, email: r.email, name: r.name, created_at: toIso(r.created_at) })
      const toMember = (r: any): Member => ({
        user_id: r.user_id,
        organization_id: r.organization_id,
        name: r.name,
        email: r.email,
        role: r.role,
        joined_at: toIso(r.joined_at)
      })

      return TenancyRepo.of({
        insertOrganization: (org) =>
          orDie(sql`INSERT INTO organizations (id, name, time_zone, escalation_delay_days, created_at)
            VALUES (${org.id}, ${org.name}, ${org.time_zone}, ${org.escalation_delay_days}, ${org.created_at})`.pipe(
            Effect.asVoid
          )),
        findOrganization: (id) =>
          orDie(sql`SELECT * FROM organizations WHERE id = ${id}`).pipe(
            Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toOrganization))
          ),
        updateOrganization: (id, patch) =>
          orDie(sql`UPDATE organizations SET
              name = COALESCE(${patch.name ?? null}, name),
              time_zone = COALESCE(${patch.time_zone ?? null}, time_zone),
              escalation_delay_days = COALESCE(${patch.escalation_delay_days ?? null}::int, escalation_delay_days)
            WHERE id = ${id} RETURNING *`).pipe(
            Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toOrganization))
          ),
        countOrganizations: orDie(sql`SELECT count(*)::int AS n FROM organizations`).pipe(
          Effect.map((rows) => Number((rows[0] as any).n))
        ),
        insertUser: (user, passwordHash) =>
          sql`INSERT INTO users (id, email, name, password_hash, created_at)
            VALUES (${user.id}, ${user.email.toLowerCase()}, ${user.name}, ${passwordHash}, ${user.created_at})`.pipe(
            Effect.asVoid,
            uniqueAsConflict({ users_email_key: `A user with the email ${user.email} already exists` })
          ),
        findUser: (id) =>
          orDie(sql`SELECT * FROM users WHERE id = ${id}`).pipe(
            Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toUser))
          ),
        findUserByEmail: (email) =>
          orDie(sql`SELECT * FROM users WHERE email = ${email.toLowerCase()}`).pipe(
            Effect.map((rows) =>
              Option.map(Option.fromNullishOr(rows[0]), (r: any) => ({ ...toUser(r), password_hash: r.password_hash }))
            )
          ),
        setPasswordHash: (userId, hash) =>
          orDie(sql`UPDATE users SET password_hash = ${hash} WHERE id = ${userId}`).pipe(Effect.asVoid),
        upsertMembership: (organizationId, userId, role, at) =>
          orDie(sql`INSERT INTO memberships (organization_id, user_id, role, joined_at)
            VALUES (${organizationId}, ${userId}, ${role}, ${at})
            ON CONFLICT (organization_id, user_id) DO UPDATE SET role = EXCLUDED.role`).pipe(Effect.asVoid),
        findMember: (organizationId, userId) =>
          orDie(sql`SELECT m.organization_id, m.user_id, m.role, m.joined_at, u.name, u.email
            FROM memberships m JOIN users u ON u.id = m.user_id
            WHERE m.organization_id = ${organizationId} AND m.user_id = ${userId}`).pipe(
            Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toMember))
          ),
        listMembers: (organizationId) =>
          orDie(sql`SELECT m.organization_id, m.user_id, m.role, m.joined_at, u.name, u.email
            FROM memberships m JOIN users u ON u.id = m.user_id
            WHERE m.organization_id = ${organizationId} ORDER BY m.joined_at, u.id`).pipe(
            Effect.map((rows) => rows.map(toMember))
          ),
        listOrganizationsOfUser: (userId) =>
          orDie(sql`SELECT o.* FROM organizations o JOIN memberships m ON m.organization_id = o.id
            WHERE m.user_id = ${userId} ORDER BY o.name, o.id`).pipe(Effect.map((rows) => rows.map(toOrganization)))
      })
    })
  )
}
