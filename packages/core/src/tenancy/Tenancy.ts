import { Context, Effect, Layer, Option, Schema } from "effect"
import { PasswordHashing } from "../shared/PasswordHashing.ts"
import { type Conflict, type HashingBusy, NotFound, ValidationFailed } from "../shared/errors.ts"
import { invalidCuiIssue, normalizeCui } from "../shared/identifiers.ts"
import { Ids, newId } from "../shared/Ids.ts"
import { nowIso } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import {
  EscalationDelayDays,
  type Member,
  type MemberRole,
  type Organization,
  type OrganizationCreate,
  OrganizationId,
  OrganizationName,
  type OrganizationUpdate,
  TimeZone,
  type User,
  UserId
} from "./model.ts"
import { TenancyRepo } from "./TenancyRepo.ts"

export const DEFAULT_TIME_ZONE = "UTC"
export const DEFAULT_ESCALATION_DELAY_DAYS = 7

const isOrganizationName = Schema.is(OrganizationName)
const isTimeZone = Schema.is(TimeZone)
const isEscalationDelayDays = Schema.is(EscalationDelayDays)

/** Organizations, their members and settings. */
export class Tenancy extends Context.Service<Tenancy, {
  readonly createOrganization: (input: OrganizationCreate) => Effect.Effect<Organization, ValidationFailed>
  readonly getOrganization: (id: string) => Effect.Effect<Organization, NotFound>
  readonly updateSettings: (
    id: string,
    patch: OrganizationUpdate
  ) => Effect.Effect<Organization, NotFound | ValidationFailed | Conflict>
  readonly createUser: (input: { readonly email: string; readonly name: string; readonly password?: string | undefined }) => Effect.Effect<User, Conflict | HashingBusy>
  readonly setPassword: (userId: string, password: string) => Effect.Effect<void, NotFound | ValidationFailed | HashingBusy>
  readonly addMember: (organizationId: string, userId: string, role: MemberRole) => Effect.Effect<Member, NotFound>
  /** The member, or 404 when the user does not belong to the organization. */
  readonly getMember: (organizationId: string, userId: string) => Effect.Effect<Member, NotFound>
  readonly listMembers: (organizationId: string) => Effect.Effect<ReadonlyArray<Member>>
}>()("@opsplatform/core/tenancy/Tenancy") {
  static readonly layer: Layer.Layer<
    Tenancy,
    never,
    TenancyRepo | Ids | Transactor | PasswordHashing
  > = Layer.effect(
    Tenancy,
    Effect.gen(function*() {
      const repo = yield* TenancyRepo
      const ids = yield* Ids
      const tx = yield* Transactor
      const hashing = yield* PasswordHashing

      // Core's own callers (the CLI, embedding hosts) reach here without the API's payload schema,
      // and a stored organization must always read back through its schema.
      const checkSettings = (patch: OrganizationUpdate) => {
        const details: Array<{ field: string; issue: string }> = []
        if (patch.name !== undefined && !isOrganizationName(patch.name)) {
          details.push({ field: "name", issue: "must be 1 to 200 characters, not all blank" })
        }
        if (patch.time_zone !== undefined && !isTimeZone(patch.time_zone)) {
          details.push({ field: "time_zone", issue: "must be an IANA time zone such as Europe/Bucharest" })
        }
        if (patch.escalation_delay_days !== undefined && !isEscalationDelayDays(patch.escalation_delay_days)) {
          details.push({ field: "escalation_delay_days", issue: "must be an integer between 0 and 365" })
        }
        if (typeof patch.vat_number === "string" && normalizeCui(patch.vat_number) === undefined) {
          details.push({ field: "vat_number", issue: invalidCuiIssue })
        }
        return details.length > 0 ? Effect.fail(new ValidationFailed({ details })) : Effect.void
      }

      const getOrganization = (id: string) =>
        repo.findOrganization(id).pipe(
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new NotFound({ resource: "organization", id })),
            onSome: Effect.succeed
          }))
        )

      const getMember = (organizationId: string, userId: string) =>
        repo.findMember(organizationId, userId).pipe(
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new NotFound({ resource: "member", id: userId })),
            onSome: Effect.succeed
          }))
        )

      return Tenancy.of({
        createOrganization: Effect.fn("Tenancy.createOrganization")(function*(input) {
          const timeZone = input.time_zone ?? DEFAULT_TIME_ZONE
          yield* checkSettings({ name: input.name, time_zone: timeZone })
          const org: Organization = {
            id: yield* newId(ids, OrganizationId),
            name: input.name,
            time_zone: timeZone,
            escalation_delay_days: DEFAULT_ESCALATION_DELAY_DAYS,
            vat_number: null,
            created_at: yield* nowIso
          }
          yield* repo.insertOrganization(org)
          return org
        }),
        getOrganization,
        updateSettings: Effect.fn("Tenancy.updateSettings")(function*(id, patch) {
          yield* checkSettings(patch)
          const stored = typeof patch.vat_number === "string" ? { ...patch, vat_number: normalizeCui(patch.vat_number) ?? null } : patch
          const updated = yield* repo.updateOrganization(id, stored)
          if (Option.isNone(updated)) return yield* new NotFound({ resource: "organization", id })
          return updated.value
        }),
        createUser: Effect.fn("Tenancy.createUser")(function*(input) {
          const user: User = {
            id: yield* newId(ids, UserId),
            email: input.email.toLowerCase(),
            name: input.name,
            created_at: yield* nowIso
          }
          const hash = input.password === undefined
            ? null
            : yield* hashing.hash(input.password)
          yield* repo.insertUser(user, hash)
          return user
        }),
        setPassword: Effect.fn("Tenancy.setPassword")(function*(userId, password) {
          if (password.length < 8 || password.length > 200) {
            return yield* ValidationFailed.field("password", "must be 8 to 200 characters")
          }
          const user = yield* repo.findUser(userId)
          if (Option.isNone(user)) return yield* new NotFound({ resource: "user", id: userId })
          yield* repo.setPasswordHash(userId, yield* hashing.hash(password))
        }),
        addMember: Effect.fn("Tenancy.addMember")(function*(organizationId, userId, role) {
          return yield* tx.withTransaction(Effect.gen(function*() {
            yield* getOrganization(organizationId)
            const user = yield* repo.findUser(userId)
            if (Option.isNone(user)) return yield* new NotFound({ resource: "user", id: userId })
            yield* repo.upsertMembership(organizationId, userId, role, yield* nowIso)
            return yield* getMember(organizationId, userId)
          }))
        }),
        getMember,
        listMembers: (organizationId) => repo.listMembers(organizationId)
      })
    })
  )
}
