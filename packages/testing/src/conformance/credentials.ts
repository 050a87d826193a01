import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import type { CoreLayers } from "@opsplatform/core"
import { CredentialRepo } from "@opsplatform/core/auth/CredentialRepo"
import { CredentialId, type StoredCredential } from "@opsplatform/core/auth/model"
import { Ids } from "@opsplatform/core/shared/Ids"
import { pageRequest } from "@opsplatform/core/shared/pagination"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { freshOrganization, timestamps } from "./support.ts"

const credential = (id: string, tenant: Tenant, hash: string, at: string, overrides: Partial<StoredCredential> = {}): StoredCredential => ({
  id: CredentialId.make(id),
  organization_id: tenant.organizationId,
  environment: tenant.environment,
  kind: "api_key",
  name: "key",
  token_hash: hash,
  token_prefix: "svc_key_abcd",
  scopes: ["locations:read", "expenses:write"],
  user_id: null,
  device_id: null,
  app_id: null,
  grant_id: null,
  created_at: at,
  last_used_at: null,
  expires_at: null,
  revoked_at: null,
  ...overrides
})

/** The CredentialRepo contract. */
export const credentialRepoConformance = (name: string, storage: Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>) =>
  describe(`CredentialRepo conformance: ${name}`, () => {
    layer(storage, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("finds a credential by its hash, keeps its scopes and touches last use", () =>
        Effect.gen(function*() {
          const repo = yield* CredentialRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const [t0, t1] = timestamps(2)
          const hash = `h-${yield* ids.uuid}`
          const c = credential(yield* ids.uuid, org.live, hash, t0!)
          yield* repo.insert(org.live, c)
          assert.deepStrictEqual(yield* repo.findByHash(hash), Option.some(c))
          assert.isTrue(Option.isNone(yield* repo.findByHash(`${hash}x`)))
          yield* repo.touch(org.live, c.id, t1!)
          assert.strictEqual(Option.getOrThrow(yield* repo.find(org.live, c.id)).last_used_at, t1)
          assert.deepStrictEqual(Option.getOrThrow(yield* repo.findById(c.id)).scopes, c.scopes)
        }))

      it.effect("revokes within its tenant only, keeps the first revocation time", () =>
        Effect.gen(function*() {
          const repo = yield* CredentialRepo
          const ids = yield* Ids
          const a = yield* freshOrganization
          const b = yield* freshOrganization
          const [t0, t1, t2] = timestamps(3)
          const c = credential(yield* ids.uuid, a.live, `h-${yield* ids.uuid}`, t0!)
          yield* repo.insert(a.live, c)
          assert.isTrue(Option.isNone(yield* repo.revoke(b.live, c.id, t1!)))
          assert.isTrue(Option.isNone(yield* repo.revoke(a.sandbox, c.id, t1!)))
          assert.strictEqual(Option.getOrThrow(yield* repo.revoke(a.live, c.id, t1!)).revoked_at, t1)
          assert.strictEqual(Option.getOrThrow(yield* repo.revoke(a.live, c.id, t2!)).revoked_at, t1)
          const page = yield* pageRequest({})
          assert.strictEqual((yield* repo.list(a.live, { revoked: false }, page)).meta.total, 0)
          assert.strictEqual((yield* repo.list(a.live, { revoked: true }, page)).meta.total, 1)
          assert.strictEqual((yield* repo.list(a.live, {}, page)).meta.total, 1)
        }))

      it.effect("revokes every live credential of a grant at once", () =>
        Effect.gen(function*() {
          const repo = yield* CredentialRepo
          const ids = yield* Ids
          const org = yield* freshOrganization
          const [t0, t1] = timestamps(2)
          const grant = yield* ids.uuid
          for (let i = 0; i < 3; i++) {
            yield* repo.insert(org.live, credential(yield* ids.uuid, org.live, `h-${yield* ids.uuid}`, t0!, { kind: "oauth", grant_id: grant }))
          }
          const other = credential(yield* ids.uuid, org.live, `h-${yield* ids.uuid}`, t0!, { kind: "oauth", grant_id: yield* ids.uuid })
          yield* repo.insert(org.live, other)
          assert.strictEqual(yield* repo.revokeGrant(grant, t1!), 3)
          assert.strictEqual(yield* repo.revokeGrant(grant, t1!), 0)
          assert.isNull(Option.getOrThrow(yield* repo.find(org.live, other.id)).revoked_at)
        }))
    })
  })
