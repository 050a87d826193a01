import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import type { CoreLayers } from "@opsplatform/core"
import { Ids } from "@opsplatform/core/shared/Ids"
import { UserId } from "@opsplatform/core/tenancy/model"
import { TenancyRepo } from "@opsplatform/core/tenancy/TenancyRepo"
import { freshOrganization, timestamps } from "./support.ts"

/** The TenancyRepo contract. */
export const tenancyRepoConformance = (name: string, storage: Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>) =>
  describe(`TenancyRepo conformance: ${name}`, () => {
    layer(storage, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("keeps organizations and changes their settings", () =>
        Effect.gen(function*() {
          const repo = yield* TenancyRepo
          const org = yield* freshOrganization
          const found = Option.getOrThrow(yield* repo.findOrganization(org.id))
          assert.strictEqual(found.time_zone, "UTC")
          const updated = Option.getOrThrow(
            yield* repo.updateOrganization(org.id, { time_zone: "Europe/Bucharest", escalation_delay_days: 3 })
          )
          assert.strictEqual(updated.time_zone, "Europe/Bucharest")
          assert.strictEqual(updated.escalation_delay_days, 3)
          assert.strictEqual(updated.name, found.name)
          assert.deepStrictEqual(yield* repo.findOrganization(org.id), Option.some(updated))
          assert.isTrue(Option.isNone(yield* repo.updateOrganization((yield* (yield* Ids).uuid), { name: "x" })))
          assert.isAtLeast(yield* repo.countOrganizations, 1)
        }))

      it.effect("refuses a second user with the same email, in any letter case", () =>
        Effect.gen(function*() {
          const repo = yield* TenancyRepo
          const ids = yield* Ids
          const [t] = timestamps(1)
          const email = `Dup.${yield* ids.uuid}@Example.test`
          yield* repo.insertUser({ id: UserId.make(yield* ids.uuid), email, name: "A", created_at: t! }, null)
          const second = yield* Effect.flip(
            repo.insertUser({ id: UserId.make(yield* ids.uuid), email: email.toUpperCase(), name: "B", created_at: t! }, null)
          )
          assert.strictEqual(second._tag, "Conflict")
          const found = Option.getOrThrow(yield* repo.findUserByEmail(email.toUpperCase()))
          assert.strictEqual(found.name, "A")
          assert.strictEqual(found.email, email.toLowerCase())
          assert.isNull(found.password_hash)
          yield* repo.setPasswordHash(found.id, "$hash")
          assert.strictEqual(Option.getOrThrow(yield* repo.findUserByEmail(email)).password_hash, "$hash")
        }))

      it.effect("keeps memberships per organization, with one row per user", () =>
        Effect.gen(function*() {
          const repo = yield* TenancyRepo
          const ids = yield* Ids
          const a = yield* freshOrganization
          const b = yield* freshOrganization
          const [t0, t1] = timestamps(2)
          const user = { id: UserId.make(yield* ids.uuid), email: `m-${yield* ids.uuid}@example.test`, name: "Mia", created_at: t0! }
          yield* repo.insertUser(user, null)
          yield* repo.upsertMembership(a.id, user.id, "member", t0!)
          yield* repo.upsertMembership(a.id, user.id, "admin", t1!)
          const member = Option.getOrThrow(yield* repo.findMember(a.id, user.id))
          assert.deepStrictEqual(member, {
            user_id: user.id,
            organization_id: a.id,
            name: "Mia",
            email: user.email,
            role: "admin",
            joined_at: t0!
          })
          assert.isTrue(Option.isNone(yield* repo.findMember(b.id, user.id)))
          assert.deepStrictEqual((yield* repo.listMembers(a.id)).map((m) => m.user_id), [user.id])
          assert.deepStrictEqual(yield* repo.listMembers(b.id), [])
          yield* repo.upsertMembership(b.id, user.id, "member", t1!)
          assert.deepStrictEqual(
            (yield* repo.listOrganizationsOfUser(user.id)).map((o) => o.id).sort(),
            [a.id, b.id].sort()
          )
        }))
    })
  })
