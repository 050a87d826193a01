import { assert, describe, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import type { CoreLayers } from "@opsplatform/core"
import { GrantRepo } from "@opsplatform/core/grants/GrantRepo"
import { AccessGrantId, type AccessGrantRecord, type GrantRole } from "@opsplatform/core/grants/model"
import { Ids } from "@opsplatform/core/shared/Ids"
import { pageRequest } from "@opsplatform/core/shared/pagination"
import type { Tenant } from "@opsplatform/core/shared/tenant"
import { TenancyRepo } from "@opsplatform/core/tenancy/TenancyRepo"
import { uniqueCui } from "../fixtures.ts"
import { freshOrganization, timestamps } from "./support.ts"

/** An organization with a VAT number of its own. */
const organizationWithVat = Effect.gen(function*() {
  const org = yield* freshOrganization
  const vat = uniqueCui()
  yield* Effect.orDie((yield* TenancyRepo).updateOrganization(org.id, { vat_number: vat }))
  return { ...org, vat }
})

/** A pending grant asked for by `by`, on side `role`, of the organization holding `vat` (null: none holds it). */
const grantRecord = (
  by: { readonly id: string },
  role: GrantRole,
  other: { readonly id: string } | null,
  vat: string,
  created_at: string,
  environment: Tenant["environment"] = "live"
) =>
  Effect.map(Effect.flatMap(Ids, (ids) => ids.uuid), (id): AccessGrantRecord => ({
    id: AccessGrantId.make(id),
    environment,
    cabinet_organization_id: role === "cabinet" ? by.id : other?.id ?? null,
    client_organization_id: role === "client" ? by.id : other?.id ?? null,
    requested_by: role,
    requested_vat_number: vat,
    status: "pending",
    scope: "read",
    created_at,
    approved_at: null,
    revoked_at: null,
    cabinet_name: null,
    cabinet_vat_number: null,
    client_name: null,
    client_vat_number: null
  }))

/** The GrantRepo contract, and the organization VAT numbers grants find each other by. */
export const grantRepoConformance = (name: string, storage: Layer.Layer<CoreLayers.StoragePorts | Ids, unknown>) =>
  describe(`GrantRepo conformance: ${name}`, () => {
    layer(storage, { timeout: "60 seconds", excludeTestServices: true })((it) => {
      it.effect("an organization's VAT number is found by its number and held by one organization at a time", () =>
        Effect.gen(function*() {
          const tenancy = yield* TenancyRepo
          const a = yield* organizationWithVat
          const b = yield* freshOrganization
          assert.strictEqual(Option.getOrThrow(yield* tenancy.findOrganizationByVatNumber(a.vat)).id, a.id)
          const taken = yield* Effect.flip(tenancy.updateOrganization(b.id, { vat_number: a.vat }))
          assert.strictEqual(taken._tag, "Conflict")
          assert.strictEqual(taken.message, "Another organization already has this VAT number")
          assert.isNull(Option.getOrThrow(yield* tenancy.findOrganization(b.id)).vat_number)
          yield* tenancy.updateOrganization(a.id, { vat_number: null })
          assert.isTrue(Option.isNone(yield* tenancy.findOrganizationByVatNumber(a.vat)))
          const moved = Option.getOrThrow(yield* tenancy.updateOrganization(b.id, { vat_number: a.vat }))
          assert.strictEqual(moved.vat_number, a.vat)
          assert.strictEqual(Option.getOrThrow(yield* tenancy.findOrganizationByVatNumber(a.vat)).id, b.id)
        }))

      it.effect("a grant is seen by either side in its environment with both sides' names, and by no one else", () =>
        Effect.gen(function*() {
          const repo = yield* GrantRepo
          const tenancy = yield* TenancyRepo
          const cabinet = yield* organizationWithVat
          const client = yield* organizationWithVat
          const stranger = yield* freshOrganization
          const [t0] = timestamps(1)
          const grant = yield* grantRecord(cabinet, "cabinet", client, client.vat, t0!)
          yield* repo.insert(cabinet.live, grant)
          const names = {
            cabinet_name: Option.getOrThrow(yield* tenancy.findOrganization(cabinet.id)).name,
            cabinet_vat_number: cabinet.vat,
            client_name: Option.getOrThrow(yield* tenancy.findOrganization(client.id)).name,
            client_vat_number: client.vat
          }
          assert.deepStrictEqual(yield* repo.find(cabinet.live, grant.id), Option.some({ ...grant, ...names }))
          assert.deepStrictEqual(yield* repo.find(client.live, grant.id), Option.some({ ...grant, ...names }))
          for (const outsider of [cabinet.sandbox, client.sandbox, stranger.live]) {
            assert.isTrue(Option.isNone(yield* repo.find(outsider, grant.id)))
            yield* repo.update(outsider, { ...grant, status: "revoked", revoked_at: t0! })
          }
          assert.strictEqual(Option.getOrThrow(yield* repo.find(client.live, grant.id)).status, "pending")
          // A side's name is read when the row is, so a rename shows at once.
          yield* tenancy.updateOrganization(client.id, { name: "Renamed client" })
          assert.strictEqual(Option.getOrThrow(yield* repo.find(cabinet.live, grant.id)).client_name, "Renamed client")
          const active = { ...grant, status: "active" as const, approved_at: t0!, scope: "bookkeeping" as const }
          yield* repo.update(client.live, active)
          const stored = Option.getOrThrow(yield* repo.find(cabinet.live, grant.id))
          assert.strictEqual(stored.status, "active")
          assert.strictEqual(stored.approved_at, t0!)
          assert.strictEqual(stored.scope, "read", "the scope is fixed at the request")
        }))

      it.effect("lists each side's grants newest first, filtered by the caller's role and the status", () =>
        Effect.gen(function*() {
          const repo = yield* GrantRepo
          const me = yield* organizationWithVat
          const x = yield* organizationWithVat
          const y = yield* organizationWithVat
          const at = timestamps(4)
          const asCabinet = yield* grantRecord(me, "cabinet", x, x.vat, at[0]!)
          const asClient = yield* grantRecord(y, "cabinet", me, me.vat, at[1]!)
          const unknown = yield* grantRecord(me, "client", null, uniqueCui(), at[2]!)
          const sandbox = yield* grantRecord(me, "cabinet", x, x.vat, at[3]!, "sandbox")
          yield* repo.insert(me.live, asCabinet)
          yield* repo.insert(y.live, asClient)
          yield* repo.insert(me.live, unknown)
          yield* repo.insert(me.sandbox, sandbox)
          yield* repo.update(me.live, { ...asClient, status: "active", approved_at: at[3]! })
          const page = yield* pageRequest({})
          const ids = (p: { items: ReadonlyArray<AccessGrantRecord> }) => p.items.map((g) => g.id)
          assert.deepStrictEqual(ids(yield* repo.list(me.live, {}, page)), [unknown.id, asClient.id, asCabinet.id])
          assert.deepStrictEqual(ids(yield* repo.list(me.live, { role: "cabinet" }, page)), [asCabinet.id])
          assert.deepStrictEqual(ids(yield* repo.list(me.live, { role: "client" }, page)), [unknown.id, asClient.id])
          assert.deepStrictEqual(ids(yield* repo.list(me.live, { role: "client", status: "pending" }, page)), [unknown.id])
          assert.deepStrictEqual(ids(yield* repo.list(me.live, { status: "active" }, page)), [asClient.id])
          assert.deepStrictEqual(ids(yield* repo.list(me.sandbox, {}, page)), [sandbox.id])
          assert.deepStrictEqual(ids(yield* repo.list(x.live, {}, page)), [asCabinet.id])
          const second = yield* repo.list(me.live, {}, yield* pageRequest({ perPage: 2 }))
          assert.strictEqual(second.meta.total, 3)
          const rest = yield* repo.list(me.live, {}, yield* pageRequest({ perPage: 2, cursor: second.meta.nextCursor! }))
          assert.deepStrictEqual(ids(rest), [asCabinet.id])
          const [withUnknown] = (yield* repo.list(me.live, { role: "client" }, page)).items
          assert.isNull(withUnknown!.cabinet_organization_id)
          assert.isNull(withUnknown!.cabinet_name)
        }))

      it.effect("refuses a second open grant between two organizations, either way round, and a second open request for one VAT number", () =>
        Effect.gen(function*() {
          const repo = yield* GrantRepo
          const a = yield* organizationWithVat
          const b = yield* organizationWithVat
          const at = timestamps(6)
          const first = yield* grantRecord(a, "cabinet", b, b.vat, at[0]!)
          yield* repo.insert(a.live, first)
          const conflict = "A pending or active access grant with this counterparty already exists"
          const reversed = yield* Effect.flip(repo.insert(b.live, yield* grantRecord(b, "cabinet", a, a.vat, at[1]!)))
          assert.strictEqual(reversed.message, conflict)
          const again = yield* Effect.flip(repo.insert(a.live, yield* grantRecord(a, "client", b, b.vat, at[1]!)))
          assert.strictEqual(again.message, conflict)
          // Another environment is another pair.
          yield* repo.insert(a.sandbox, yield* grantRecord(a, "cabinet", b, b.vat, at[1]!, "sandbox"))
          // A number no organization holds: one open request per asker all the same.
          const nobody = uniqueCui()
          yield* repo.insert(a.live, yield* grantRecord(a, "cabinet", null, nobody, at[2]!))
          const twice = yield* Effect.flip(repo.insert(a.live, yield* grantRecord(a, "client", null, nobody, at[3]!)))
          assert.strictEqual(twice.message, conflict)
          yield* repo.insert(b.live, yield* grantRecord(b, "cabinet", null, nobody, at[3]!))
          // Once the first is revoked, the two may start again.
          yield* repo.update(b.live, { ...first, status: "revoked", revoked_at: at[4]! })
          yield* repo.insert(b.live, yield* grantRecord(b, "cabinet", a, a.vat, at[5]!))
        }))

      it.effect("finds the grant a cabinet reaches a client through: the active one, else the latest, in its environment", () =>
        Effect.gen(function*() {
          const repo = yield* GrantRepo
          const cabinet = yield* organizationWithVat
          const client = yield* organizationWithVat
          const at = timestamps(5)
          assert.isTrue(Option.isNone(yield* repo.findForClient(cabinet.live, client.id)))
          const old = yield* grantRecord(cabinet, "cabinet", client, client.vat, at[0]!)
          yield* repo.insert(cabinet.live, old)
          yield* repo.update(client.live, { ...old, status: "active", approved_at: at[1]! })
          const latest = yield* grantRecord(client, "client", cabinet, cabinet.vat, at[2]!)
          // The active grant comes first even with a newer revoked one beside it.
          yield* repo.update(cabinet.live, { ...old, status: "revoked", approved_at: at[1]!, revoked_at: at[2]! })
          yield* repo.insert(client.live, latest)
          yield* repo.update(cabinet.live, { ...latest, status: "active", approved_at: at[3]! })
          yield* repo.insert(cabinet.live, { ...(yield* grantRecord(cabinet, "cabinet", client, client.vat, at[4]!)), status: "revoked", revoked_at: at[4]! })
          assert.strictEqual(Option.getOrThrow(yield* repo.findForClient(cabinet.live, client.id)).id, latest.id)
          yield* repo.update(client.live, { ...latest, status: "revoked", approved_at: at[3]!, revoked_at: at[4]! })
          const found = Option.getOrThrow(yield* repo.findForClient(cabinet.live, client.id))
          assert.strictEqual(found.status, "revoked")
          assert.strictEqual(found.created_at, at[4]!)
          assert.isTrue(Option.isNone(yield* repo.findForClient(cabinet.sandbox, client.id)))
          // The client does not reach its cabinet through a grant that makes it the client.
          assert.isTrue(Option.isNone(yield* repo.findForClient(client.live, cabinet.id)))
        }))
    })
  })
