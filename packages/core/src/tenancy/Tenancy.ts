import { Context, Effect, Layer, Option } from "effect"
import type { Kdf, SecureRandom } from "effect/crypto"
import { hashLowEntropy } from "../auth/secrets.ts"
import { type Conflict, NotFound, ValidationFailed } from "../shared/errors.ts"
import { Ids } from "../shared/Ids.ts"
import { nowIso } from "../shared/time.ts"
import { Transactor } from "../shared/Transactor.ts"
import { isValidTimeZone, type Member, type MemberRole, type Organization, type User } from "./model.ts"
import { type OrganizationSettingsPatch, TenancyRepo } from "./TenancyRepo.ts"

export const DEFAULT_TIME_ZONE = "UTC"
export const DEFAULT_ESCALATION_DELAY_DAYS = 7

/** Organizations, their members and settings. */
export class Tenancy extends Context.Service<Tenancy, {
  readonly createOrganization: (input: { readonly name: string; readonly time_zone?: string | undefined }) => Effect.Effect<Organization, ValidationFailed>
  readonly getOrganization: (id: string) => Effect.Effect<Organization, NotFound>
  readonly updateSettings: (id: string, patch: OrganizationSettingsPatch) => Effect.Effect<Organization, NotFound | ValidationFailed>
  readonly createUser: (input: { readonly email: string; readonly name: string; readonly password?: string | undefined }) => Effect.Effect<User, Conflict>
  readonly setPassword: (userId: string, password: string) => Effect.Effect<void, NotFound | ValidationFailed>
  readonly addMember: (organizationId: string, userId: string, role: MemberRole) => Effect.Effect<Member, NotFound>
  /** The member, or 404 when the user does not belong to the organization. */
  readonly getMember: (organizationId: string, userId: string) => Effect.Effect<Member, NotFound>
  readonly listMembers: (organizationId: string) => Effect.Effect<ReadonlyArray<Member>>
}>()("@opsplatform/core/tenancy/Tenancy") {
  static readonly layer: Layer.Layer<
    Tenancy,
    never,
    TenancyRepo | Ids | Transactor | Kdf.Kdf | SecureRandom.SecureRandom
  > = Layer.effect(
    Tenancy,
    Effect.gen(function*() {
      const repo = yield* TenancyRepo
      const ids = yield* Ids
      const tx = yield* Transactor
      const crypto = yield* Effect.context<Kdf.Kdf | SecureRandom.SecureRandom>()

      const checkSettings = (patch: OrganizationSettingsPatch) => {
        const details: Array<{ field: string; issue: string }> = []
        if (patch.time_zone !== undefined && !isValidTimeZone(patch.time_zone)) {
          details.push({ field: "time_zone", issue: "must be an IANA time zone such as Europe/Bucharest" })
        }
        if (
          patch.escalation_delay_days !== undefined &&
          (!Number.isInteger(patch.escalation_delay_days) || patch.escalation_delay_days < 0 ||
            patch.escalation_delay_days > 365)
        ) {
          details.push({ field: "escalation_delay_days", issue: "must be an integer between 0 and 365" })
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
          yield* checkSettings({ time_zone: timeZone })
          const org: Organization = {
            id: yield* ids.uuid,
            name: input.name,
            time_zone: timeZone,
            escalation_delay_days: DEFAULT_ESCALATION_DELAY_DAYS,
            created_at: yield* nowIso
          }
          yield* repo.insertOrganization(org)
          return org
        }),
        getOrganization,
        updateSettings: Effect.fn("Tenancy.updateSettings")(function*(id, patch) {
          yield* checkSettings(patch)
          const updated = yield* repo.updateOrganization(id, patch)
          if (Option.isNone(updated)) return yield* new NotFound({ resource: "organization", id })
          return updated.value
        }),
        createUser: Effect.fn("Tenancy.createUser")(function*(input) {
          const user: User = {
            id: yield* ids.uuid,
            email: input.email.toLowerCase(),
            name: input.name,
            created_at: yield* nowIso
          }
          const hash = input.password === undefined
            ? null
            : yield* Effect.provideContext(hashLowEntropy(input.password), crypto)
          yield* repo.insertUser(user, hash)
          return user
        }),
        setPassword: Effect.fn("Tenancy.setPassword")(function*(userId, password) {
          if (password.length < 8 || password.length > 200) {
            return yield* ValidationFailed.field("password", "must be 8 to 200 characters")
          }
          const user = yield* repo.findUser(userId)
          if (Option.isNone(user)) return yield* new NotFound({ resource: "user", id: userId })
          yield* repo.setPasswordHash(userId, yield* Effect.provideContext(hashLowEntropy(password), crypto))
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
